// Instance names travel in response headers and gRPC metadata, so they must be short header-safe tokens.

export function backendName(name: string): string {
  if (!/^[A-Za-z0-9._:-]{1,64}$/.test(name)) {
    throw new Error(`backend name ${JSON.stringify(name)} must be 1-64 characters from A-Z a-z 0-9 . _ : -`);
  }
  return name;
}
