// The admin API's error codes: every error it answers is JSON `{ code, message }`.
// docs/attach.md lists them; a test keeps the two in step.
export const ADMIN_ERROR_CODES = [
  'bad-request',
  'not-found',
  'no-configuration',
  'not-loaded',
  'no-xds',
  'internal',
] as const;

export type AdminErrorCode = (typeof ADMIN_ERROR_CODES)[number];

export class AdminError extends Error {
  override name = 'AdminError';
  constructor(
    readonly status: number,
    readonly code: AdminErrorCode,
    message: string,
  ) {
    super(message);
  }
}
