// curl (Debian's) as a test client: the tool users reach the gateway with.
import { execFile } from 'node:child_process';

export interface CurlResponse {
  readonly status: number;
  readonly headers: Map<string, string[]>;
  readonly body: string;
}

export async function curl(url: string, args: readonly string[] = []): Promise<CurlResponse> {
  const out = await new Promise<string>((resolve, reject) =>
    execFile(
      'curl',
      ['-sS', '-i', '--max-time', '10', ...args, url],
      { maxBuffer: 16 << 20 },
      (err, stdout, stderr) =>
        err ? reject(new Error(`curl ${url} failed: ${stderr || err.message}`)) : resolve(stdout),
    ),
  );
  // With -i, curl prints each response's head; the last one is the final response.
  const parts = out.split(/\r\n\r\n/);
  let headIndex = 0;
  while (headIndex + 1 < parts.length && /^HTTP\/[\d.]+ 1\d\d/.test(parts[headIndex + 1] ?? '')) headIndex++;
  const head = parts[headIndex] ?? '';
  const body = parts.slice(headIndex + 1).join('\r\n\r\n');
  const [statusLine, ...lines] = head.split('\r\n');
  const status = Number(/^HTTP\/[\d.]+ (\d{3})/.exec(statusLine ?? '')?.[1] ?? 0);
  const headers = new Map<string, string[]>();
  for (const line of lines) {
    const i = line.indexOf(':');
    if (i <= 0) continue;
    const k = line.slice(0, i).trim().toLowerCase();
    headers.set(k, [...(headers.get(k) ?? []), line.slice(i + 1).trim()]);
  }
  return { status, headers, body };
}
