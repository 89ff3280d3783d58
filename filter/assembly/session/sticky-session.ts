// Session persistence for one request (GEP-1619; docs/session-persistence.md).
// Request: read the token from the cookie or header, open it, and pin the request to its
// backend through the stateful_session filter's header. Response: look at which backend
// actually served the request, and issue a token when a session starts, moves to another
// backend, or slides forward (idleTimeout). A bad token is never an error: no session.
import { HeaderMapType } from '../abi/enums';
import {
  addHeader,
  getHeader,
  getHeaderValues,
  getPropertyString,
  incrementCounter,
  randomBytes,
  removeHeader,
  setHeader,
} from '../abi/host';
import { scratch } from '../abi/memory';
import { encodeBase64 } from '../encoding/base64';
import { H_COOKIE, H_FORWARDED_PROTO, H_PIN, H_SET_COOKIE } from '../headers';
import { FilterMetrics } from '../metrics';
import { Policy } from '../policy/token';
import { P_TLS_VERSION, P_UPSTREAM_ADDRESS } from '../properties';
import { CookieLookup, MAX_COOKIE_HEADERS, MAX_COOKIE_VALUES, findCookie, setCookieValue } from './cookie';
import { SessionKeys } from './keys';
import { CachedSession, OpenedSessionCache } from './opened-cache';
import { open, OpenedSession, SESSION_NONCE_BYTES, sealToBuffer, sealedTokenPtr, TokenStatus } from './token';

// One request is handled at a time per VM: these are reused, never reallocated.
const NONCE = new StaticArray<u8>(SESSION_NONCE_BYTES);
const OPENED = new OpenedSession();
const COOKIE = new CookieLookup();
/** The request's Cookie header values, when more than one has to be read. */
const COOKIE_HEADERS: string[] = [];

export class StickySession {
  /** The request carried a valid session and was pinned to `endpoint`. */
  resumed: bool = false;
  endpoint: string = '';
  issuedAtS: u64 = 0;
  lastUsedS: u64 = 0;
  expiresAtS: u64 = 0;

  /** Request phase, at `nowS`. Returns true when the request was pinned to a backend. */
  begin(
    policy: Policy,
    keys: SessionKeys,
    cache: OpenedSessionCache,
    nowS: u64,
    metrics: FilterMetrics,
  ): bool {
    const req = HeaderMapType.RequestHeaders;
    let status = TokenStatus.Empty;
    let session: CachedSession | null = null;
    if (policy.sessionIsHeader) {
      const token = getHeader(req, policy.sessionNameUtf8());
      if (token != null) session = this.openToken(token, policy, keys, cache, nowS);
      status = this.lastStatus;
    } else {
      const header = getHeader(req, H_COOKIE);
      if (header != null) {
        findCookie(header, policy.sessionName, COOKIE);
        // Duplicates (a client or proxy may send two): the first valid token wins.
        let tried = 0;
        for (; tried < COOKIE.values.length && session == null; tried++) {
          session = this.openToken(unchecked(COOKIE.values[tried]), policy, keys, cache, nowS);
          if (tried == 0) status = this.lastStatus;
        }
        // HTTP/1 allows one Cookie header, but clients and proxies send more, and Envoy keeps
        // them apart (HTTP/2's are joined into one): only without a session in the first
        // does the filter ask for the others.
        if (session == null && COOKIE.values.length < MAX_COOKIE_VALUES) {
          const n = getHeaderValues(req, H_COOKIE, COOKIE_HEADERS, MAX_COOKIE_HEADERS);
          // The first entry is the header already read.
          for (let h = 1; h < n; h++)
            findCookie(unchecked(COOKIE_HEADERS[h]), policy.sessionName, COOKIE, true);
          for (; tried < COOKIE.values.length && session == null; tried++) {
            session = this.openToken(unchecked(COOKIE.values[tried]), policy, keys, cache, nowS);
            if (tried == 0) status = this.lastStatus;
          }
        }
      }
    }
    if (session == null) {
      if (status == TokenStatus.Expired) incrementCounter(metrics.sessionExpired);
      else if (status != TokenStatus.Empty) incrementCounter(metrics.sessionRejected);
      return false;
    }
    this.resumed = true;
    this.endpoint = session.endpoint;
    this.issuedAtS = session.issuedAtS;
    this.lastUsedS = session.lastUsedS;
    this.expiresAtS = session.expiresAtS;
    setHeader(req, H_PIN, session.pin);
    incrementCounter(metrics.sessionResumed);
    return true;
  }

  /** Why the last openToken found no session. */
  private lastStatus: TokenStatus = TokenStatus.Empty;

  /** The session `token` holds under `policy` now, or null (lastStatus says why). */
  private openToken(
    token: string,
    policy: Policy,
    keys: SessionKeys,
    cache: OpenedSessionCache,
    nowS: u64,
  ): CachedSession | null {
    if (token.length == 0) {
      this.lastStatus = TokenStatus.Empty;
      return null;
    }
    let session = cache.find(token, policy.rule);
    if (session == null) {
      const status = open(token, keys, policy.rule, nowS, OPENED);
      if (status != TokenStatus.Ok) {
        this.lastStatus = status;
        return null;
      }
      // The stateful_session filter reads the pin as base64 of `ip:port`.
      const pin = scratch(128);
      const pinLength = encodeBase64(changetype<usize>(OPENED.endpointText), OPENED.endpointLength, pin);
      session = new CachedSession(
        policy.rule,
        OPENED.endpoint,
        String.UTF8.decodeUnsafe(pin, <usize>pinLength),
        OPENED.issuedAtS,
        OPENED.lastUsedS,
        OPENED.expiresAtS,
      );
      cache.remember(token, session);
    } else if (session.expiresAtS != 0 && nowS >= session.expiresAtS) {
      // What `open` says of an authentic token past its expiry.
      this.lastStatus = TokenStatus.Expired;
      return null;
    }
    // Times are whole seconds: two uses 1.01 s apart can read as 2 s. Expire only past the
    // timeout, so a session is never cut early (at most a second late).
    if (policy.idleTimeoutS > 0 && nowS - session.lastUsedS > <u64>policy.idleTimeoutS) {
      this.lastStatus = TokenStatus.Expired;
      return null;
    }
    this.lastStatus = TokenStatus.Ok;
    return session;
  }

  /**
   * Response phase, at the request's `nowS`: issues or renews the token as needed, and
   * keeps the served host stateful_session writes into a response from the client.
   */
  finish(policy: Policy, keys: SessionKeys, nowS: u64, metrics: FilterMetrics): void {
    const served = getPropertyString(P_UPSTREAM_ADDRESS);
    // A local reply (no upstream) starts no session.
    if (served == null || served.length == 0) {
      removePinFromResponse();
      return;
    }
    let issuedAt = nowS;
    let expiresAt: u64 = policy.absoluteTimeoutS > 0 ? nowS + <u64>policy.absoluteTimeoutS : 0;
    if (this.resumed && served == this.endpoint) {
      // Same backend: stateful_session wrote no host into the response. Only a sliding
      // (idle) session needs a fresh token, at most once a second.
      if (policy.idleTimeoutS <= 0 || nowS <= this.lastUsedS) return;
      issuedAt = this.issuedAtS;
      expiresAt = this.expiresAtS;
      incrementCounter(metrics.sessionRenewed);
    } else {
      removePinFromResponse();
      incrementCounter(this.resumed ? metrics.sessionMoved : metrics.sessionCreated);
    }
    if (!randomBytes(changetype<usize>(NONCE), <usize>SESSION_NONCE_BYTES)) {
      incrementCounter(metrics.sessionUnavailable);
      return;
    }
    const length = sealToBuffer(served, issuedAt, nowS, expiresAt, keys, policy.rule, NONCE);
    if (length < 0) {
      incrementCounter(metrics.sessionUnavailable);
      return;
    }
    const token = String.UTF8.decodeUnsafe(sealedTokenPtr(), <usize>length);
    const resp = HeaderMapType.ResponseHeaders;
    if (policy.sessionIsHeader) {
      setHeader(resp, policy.sessionNameUtf8(), token);
    } else {
      const maxAge: i64 = policy.permanent && expiresAt > 0 ? <i64>(expiresAt - nowS) : -1;
      addHeader(
        resp,
        H_SET_COOKIE,
        setCookieValue(policy.sessionName, token, policy.sessionPath, secure(), maxAge),
      );
    }
  }
}

/** `Secure` when the client's connection is TLS, or a trusted proxy says it was. */
function secure(): bool {
  if (getPropertyString(P_TLS_VERSION) != null) return true;
  const proto = getHeader(HeaderMapType.RequestHeaders, H_FORWARDED_PROTO);
  return proto != null && proto == 'https';
}

/** The pin must never reach a client or come from one. */
export function removePinFromRequest(): void {
  removeHeader(HeaderMapType.RequestHeaders, H_PIN);
}

export function removePinFromResponse(): void {
  removeHeader(HeaderMapType.ResponseHeaders, H_PIN);
}
