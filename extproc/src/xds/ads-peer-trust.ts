// The open ADS streams' client certificates, checked again when the port's trust changes: a
// handshake checks a client once, so without this a client CA rotated to cut an Envoy off, or a
// client certificate that expires while connected, would leave its stream open for days. A
// stream whose certificate no longer verifies against the client CA in use, or has expired (or
// an issuer's has, up to that CA), is ended with its connection (not the stream alone: the
// Envoy would open the next stream on the same, already trusted, TLS connection); the Envoy
// reconnects and its handshake decides.
import { X509Certificate } from 'node:crypto';
import type { PeerCertificate, TLSSocket } from 'node:tls';

/** What of grpc-js's server call (1.14, no interceptors) leads to the HTTP/2 session. */
interface CallInternals {
  readonly call?: {
    readonly stream?: { readonly session?: { readonly socket?: TLSSocket; destroy(): void } };
  };
  getAuthContext?(): { sslPeerCertificate?: PeerCertificate };
}

/** A stream as this module sees it: its gRPC call. */
export interface PeerStream {
  readonly call: object;
}

/** setTimeout's longest delay; a certificate valid longer is looked at again then. */
const MAX_DELAY_MS = 2 ** 31 - 1;

/** The certificates of a PEM bundle (X509Certificate reads the first alone). */
export function certificatesOf(pem: Buffer): X509Certificate[] {
  const blocks = pem
    .toString('latin1')
    .match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g);
  return (blocks ?? []).map((b) => new X509Certificate(b));
}

/** The chain the client presented, leaf first (empty without TLS). */
export function peerChain(call: object): X509Certificate[] {
  const internals = call as CallInternals;
  const socket = internals.call?.stream?.session?.socket;
  let cert: PeerCertificate | undefined =
    typeof socket?.getPeerCertificate === 'function'
      ? (socket.getPeerCertificate(true) as PeerCertificate)
      : internals.getAuthContext?.().sslPeerCertificate;
  const chain: X509Certificate[] = [];
  const seen = new Set<string>();
  while (cert?.raw && !seen.has(cert.fingerprint256)) {
    seen.add(cert.fingerprint256);
    chain.push(new X509Certificate(cert.raw));
    cert = (cert as { issuerCertificate?: PeerCertificate }).issuerCertificate;
  }
  return chain;
}

/**
 * The certificates a handshake would check for this chain: the links it presented up to the
 * first one a CA in use issued (or is), then that CA and its issuers in use up to a
 * self-signed one (OpenSSL, without partial chains, builds up to a root and checks every
 * date). Undefined: no such path, and a handshake would refuse it.
 */
function trustPath(
  chain: readonly X509Certificate[],
  cas: readonly X509Certificate[],
): X509Certificate[] | undefined {
  const from = (c: X509Certificate, issuer: X509Certificate) =>
    c.checkIssued(issuer) && c.verify(issuer.publicKey);
  // Of two CAs in use that issued it (a CA renewed with its key), the one valid longest.
  const issuerIn = (c: X509Certificate) =>
    cas.filter((ca) => from(c, ca)).sort((a, b) => Date.parse(b.validTo) - Date.parse(a.validTo))[0];
  const isCa = (c: X509Certificate) => cas.some((ca) => ca.fingerprint256 === c.fingerprint256);
  const path: X509Certificate[] = [];
  // Up the chain it presented, each link issued by the next, until one a CA in use is or issued.
  let at: X509Certificate | undefined;
  for (const [i, c] of chain.entries()) {
    path.push(c);
    if (isCa(c) || issuerIn(c)) {
      at = c;
      break;
    }
    const next = chain[i + 1];
    if (!next || !from(c, next)) return undefined;
  }
  // Then up the CAs in use to a self-signed one.
  while (at && !from(at, at)) {
    const up = issuerIn(at);
    if (!up || path.some((c) => c.fingerprint256 === up.fingerprint256)) return undefined;
    path.push(up);
    at = up;
  }
  return at ? path : undefined;
}

/** When the first certificate of a path expires (each of them ends the trust in it). */
function pathEnds(path: readonly X509Certificate[]): number {
  return Math.min(...path.map((c) => Date.parse(c.validTo)));
}

/** Why the port would not take this chain now (undefined: it would, or there is none to judge). */
export function untrustedBecause(
  chain: readonly X509Certificate[],
  cas: readonly X509Certificate[],
): string | undefined {
  const leaf = chain[0];
  if (!leaf) return undefined;
  if (Date.parse(leaf.validTo) <= Date.now()) return `its certificate expired (valid until ${leaf.validTo})`;
  const path = trustPath(chain, cas);
  if (!path)
    return `its certificate (issuer ${leaf.issuer.replace(/\n/g, ', ')}) is not from the client CA now in use`;
  // A handshake checks the dates of every certificate up to the CA: an expired issuer refuses too.
  const expired = path.find((c) => Date.parse(c.validTo) <= Date.now());
  return expired
    ? `the certificate of its issuer ${expired.subject.replace(/\n/g, ', ')} expired (valid until ${expired.validTo})`
    : undefined;
}

/**
 * Follows each open stream's client certificate: ends the stream (and its connection) when the
 * certificate or one of its issuers up to the CA expires, or when the client CA changes to one
 * that did not issue it.
 */
export class PeerTrust<S extends PeerStream> {
  private cas: X509Certificate[];
  private readonly chains = new Map<S, { chain: X509Certificate[]; timer?: NodeJS.Timeout }>();

  /** Whether the log already said that a stream's certificate could not be read. */
  private unreadSaid = false;

  constructor(
    ca: Buffer,
    /** Called once the stream is to go, before its connection is destroyed; `why` for the log. */
    private readonly ending: (s: S, why: string) => void,
    private readonly log: (line: string) => void = () => {},
  ) {
    this.cas = certificatesOf(ca);
  }

  /**
   * A new stream: judged now against the client CA in use (it may come on a connection whose
   * handshake an earlier CA passed: Envoy opens its next stream on the same one), then kept and
   * looked at again when its certificate expires. False: it was ended.
   */
  opened(s: S): boolean {
    const entry = { chain: peerChain(s.call) };
    if (entry.chain.length === 0 && !this.unreadSaid) {
      // The port asks every client for a certificate, so this is grpc-js's internals moving.
      this.unreadSaid = true;
      this.log(
        "xds: an ADS stream's client certificate could not be read (grpc-js changed?): a client CA change or an expiry will not end open streams",
      );
    }
    this.chains.set(s, entry);
    const why = untrustedBecause(entry.chain, this.cas);
    if (why) {
      this.end(s, why);
      return false;
    }
    this.armExpiry(s, entry);
    return true;
  }

  /** The stream is gone. */
  closed(s: S): void {
    const entry = this.chains.get(s);
    if (entry?.timer) clearTimeout(entry.timer);
    this.chains.delete(s);
  }

  /** The client CA in use now: every open stream whose certificate it did not issue is ended. */
  caChanged(ca: Buffer): void {
    this.cas = certificatesOf(ca);
    for (const [s, entry] of [...this.chains]) {
      const why = untrustedBecause(entry.chain, this.cas);
      // A kept stream's path may now end at another CA, with other dates.
      if (why) this.end(s, why);
      else this.armExpiry(s, entry);
    }
  }

  /** Stops every timer (the server stopped). */
  stop(): void {
    for (const s of [...this.chains.keys()]) this.closed(s);
  }

  private armExpiry(s: S, entry: { chain: X509Certificate[]; timer?: NodeJS.Timeout }): void {
    if (entry.timer) clearTimeout(entry.timer);
    const path = trustPath(entry.chain, this.cas);
    if (!path) return;
    const delay = Math.max(0, pathEnds(path) - Date.now());
    entry.timer = setTimeout(
      () => {
        const why = untrustedBecause(entry.chain, this.cas);
        if (why) this.end(s, why);
        else if (this.chains.get(s) === entry) this.armExpiry(s, entry);
      },
      Math.min(delay + 1, MAX_DELAY_MS),
    );
    entry.timer.unref();
  }

  private end(s: S, why: string): void {
    this.closed(s);
    this.ending(s, why);
    const session = (s.call as CallInternals).call?.stream?.session;
    session?.destroy();
  }
}
