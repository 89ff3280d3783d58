// Envoy's duration strings, from the IR's milliseconds.

/** Milliseconds as an Envoy duration string. */
export function durationMs(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${(ms / 1000).toFixed(3).replace(/0+$/, '')}s`;
}
