// Putting certificates into test YAML: a Secret's data is base64, a ConfigMap's PEM an
// indented block scalar.

export const b64 = (s: string): string => Buffer.from(s).toString('base64');

/** A PEM as the lines of a block scalar four spaces deep. */
export const indented = (pem: string): string =>
  pem
    .trim()
    .split('\n')
    .map((l) => `    ${l}`)
    .join('\n');
