// Envoy configuration as YAML text. Envoy's YAML reader follows YAML 1.1, where `yes`,
// `on` or `y` are booleans: strings like those are quoted, so a header value stays a string.
// Single quotes, as the repository's Prettier style writes YAML.
import { stringify } from 'yaml';

export function envoyYaml(config: unknown, header?: string): string {
  // Shared objects are written out in full: an operator reads the file, not anchors.
  const body = stringify(config, {
    version: '1.1',
    lineWidth: 0,
    singleQuote: true,
    aliasDuplicateObjects: false,
  });
  if (header === undefined) return body;
  return `${header
    .split('\n')
    .map((l) => (l === '' ? '#' : `# ${l}`))
    .join('\n')}\n${body}`;
}
