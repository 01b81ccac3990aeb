import { createHash } from "node:crypto";
import type pg from "pg";
import type { PrismaClient } from "@/lib/generated/prisma/client";
import { checkSameOrigin } from "@/lib/auth/same-origin";
import { addToContext } from "@/lib/observability/request-context";
import { expireTossedSessionCookies, presentedSession } from "@/lib/auth/presented-session";
import {
  API_TOKEN_PATTERN,
  HOST_SESSION_COOKIE,
  SESSION_COOKIE,
  isIssuedSessionToken,
  mintApiToken,
  sessionCookieName,
} from "@/lib/auth/session-cookie";
import type { Queryable } from "@/lib/db/sql";
import { inTransaction } from "@/lib/db/transaction";
import { sessionSecret } from "@/lib/env";
import { requestScheme } from "@/lib/http/request-scheme";
import { rateLimitedResponse, requestProblemResponse } from "@/lib/http/request-problems";
import type { LimitDecision } from "@/lib/limits/rate-limit";

/**
 * Who is asking. API clients send `Authorization: Bearer <token>` (from
 * POST /api/accounts); browsers carry the session cookie the proxy minted.
 * Only SHA-256 digests of tokens are stored: a database leak yields no usable
 * credential.
 */
export interface Caller {
  accountId: string;
}

/**
 * `unauthenticated`: no usable credential (401); `several-sessions`: more
 * than one session cookie, trusted as neither (401; `setCookies` expire the
 * tossed ones, so the same request sent again works); `cross-site`: a
 * session cookie on a request another site made (403); `rate-limited`: a
 * new browser's account, past its address's limit on new accounts (429).
 */
export type AuthFailure =
  | { kind: "unauthenticated" | "cross-site"; detail: string }
  | { kind: "several-sessions"; detail: string; setCookies: string[] }
  | { kind: "rate-limited"; detail: string; retryAfterSeconds: number };

export type AuthResult = { ok: true; caller: Caller } | { ok: false; failure: AuthFailure };

/** What authenticating needs: the accounts, and the per-address limit on new ones. */
export interface Authenticator {
  db: PrismaClient;
  /** The same connections as `db`, for the transaction that makes a browser's account. */
  pool: pg.Pool;
  /**
   * Counts one new account for the request's client address; refuses it
   * once the window is full. Given a transaction, counts on its connection,
   * so the point commits with the account it admits.
   */
  admitNewAccount(request: Request, transaction?: Queryable): Promise<LimitDecision>;
}

/** The answer to a request that could not be authenticated. */
export function authFailureResponse(failure: AuthFailure): Response {
  if (failure.kind === "rate-limited")
    return rateLimitedResponse(failure.detail, failure.retryAfterSeconds);
  const response = requestProblemResponse(failure.kind, failure.detail);
  if (failure.kind === "several-sessions")
    for (const cookie of failure.setCookies) response.headers.append("Set-Cookie", cookie);
  return response;
}

/** The 429 detail of an address past its limit on new accounts, for API and browser accounts alike. */
export function tooManyAccounts(retryAfterSeconds: number): string {
  return `This address created more accounts than its rate limit allows. Retry after ${retryAfterSeconds} s.`;
}

/**
 * Which account a token stands for never changes (accounts are neither
 * deleted nor given new tokens), so each instance keeps the ones it has met:
 * a replay, or a storm of retries, then asks the database nothing to know
 * who is asking. Only accounts found are kept (an unknown token is looked up
 * every time); past KNOWN_ACCOUNTS_MAX the oldest go first.
 */
interface KnownAccount {
  id: string;
  kind: "api" | "browser";
}
const KNOWN_ACCOUNTS_MAX = 10_000;
const knownAccounts = new Map<string, KnownAccount>();

async function accountByTokenHash(
  db: PrismaClient,
  tokenHash: string,
): Promise<KnownAccount | undefined> {
  const known = knownAccounts.get(tokenHash);
  if (known) return known;
  const found = await db.account.findUnique({
    where: { tokenHash },
    select: { id: true, kind: true },
  });
  if (found) {
    if (knownAccounts.size >= KNOWN_ACCOUNTS_MAX)
      knownAccounts.delete(knownAccounts.keys().next().value!);
    knownAccounts.set(tokenHash, found);
  }
  return found ?? undefined;
}

export function hashToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

export async function createApiAccount(db: PrismaClient): Promise<{ id: string; token: string }> {
  const token = mintApiToken();
  const account = await db.account.create({
    data: { tokenHash: hashToken(token), kind: "api" },
    select: { id: true },
  });
  return { id: account.id, token };
}

/** Who is asking; from here on the request's log lines name the account. */
export async function authenticate(auth: Authenticator, request: Request): Promise<AuthResult> {
  const result = await identify(auth, request);
  if (result.ok) addToContext({ accountId: result.caller.accountId });
  return result;
}

async function identify(auth: Authenticator, request: Request): Promise<AuthResult> {
  const authorization = request.headers.get("authorization");
  if (authorization !== null) return authenticateBearer(auth.db, authorization);

  // A write that carries a session cookie under either name is checked for
  // its origin first: a cross-site write is refused as such. Only the name
  // the request's scheme allows is a credential (over HTTPS, the __Host- one).
  const cookies = request.headers.get("cookie");
  const anySession = [SESSION_COOKIE, HOST_SESSION_COOKIE].some(
    (name) => presentedSession(cookies, name).kind !== "none",
  );
  if (anySession) {
    const origin = checkSameOrigin(request);
    if (!origin.ok) return { ok: false, failure: { kind: "cross-site", detail: origin.detail } };
    const session = presentedSession(cookies, sessionCookieName(requestScheme(request)));
    if (session.kind === "none") return unauthenticated(NOT_ISSUED);
    if (session.kind === "several") {
      // Repaired in this very answer: the next request carries ours alone.
      const setCookies = expireTossedSessionCookies(request);
      return {
        ok: false,
        failure: { kind: "several-sessions", detail: SEVERAL_SESSIONS, setCookies },
      };
    }
    return authenticateSession(auth, request, session.token);
  }

  return unauthenticated(
    "Send Authorization: Bearer <token> (create one with POST /api/accounts), or use the shop in a browser.",
  );
}

const NOT_ISSUED =
  "The session cookie is not one this server issued. Reload the shop to get a new one.";

const SEVERAL_SESSIONS =
  "This browser sent more than one session cookie, so neither was trusted: another site on this host probably set one. This answer removes the extra ones; send the request again.";

function unauthenticated(detail: string): AuthResult {
  return { ok: false, failure: { kind: "unauthenticated", detail } };
}

async function authenticateBearer(db: PrismaClient, authorization: string): Promise<AuthResult> {
  const match = /^Bearer\s+(\S+)$/i.exec(authorization.trim());
  const token = match?.[1];
  if (!token || !API_TOKEN_PATTERN.test(token))
    return unauthenticated("The Authorization header is not a valid bearer token.");
  const account = await accountByTokenHash(db, hashToken(token));
  if (!account || account.kind !== "api")
    return unauthenticated("The bearer token is not recognised.");
  return { ok: true, caller: { accountId: account.id } };
}

/**
 * A browser's account is created the first time its session token is used,
 * so page loads never wait on the database; only for a token this server
 * signed, so a cookie planted by someone else is never an account, and only
 * within its address's limit on new accounts, as POST /api/accounts is.
 */
async function authenticateSession(
  auth: Authenticator,
  request: Request,
  token: string,
): Promise<AuthResult> {
  if (!isIssuedSessionToken(token, sessionSecret())) return unauthenticated(NOT_ISSUED);
  const tokenHash = hashToken(token);
  const existing = await accountByTokenHash(auth.db, tokenHash);
  if (existing) {
    return existing.kind === "browser"
      ? { ok: true, caller: { accountId: existing.id } }
      : unauthenticated("The session cookie is not valid.");
  }
  const made = await makeBrowserAccount(auth, request, tokenHash);
  if (made.ok) return { ok: true, caller: { accountId: made.accountId } };
  if (made.kind === "not-a-browser") return unauthenticated("The session cookie is not valid.");
  const { retryAfterSeconds } = made;
  return {
    ok: false,
    failure: {
      kind: "rate-limited",
      retryAfterSeconds,
      detail: tooManyAccounts(retryAfterSeconds),
    },
  };
}

type MadeAccount =
  | { ok: true; accountId: string }
  | { ok: false; kind: "not-a-browser" }
  | { ok: false; kind: "rate-limited"; retryAfterSeconds: number };

/**
 * Makes the browser's account and counts it against its address, in one
 * transaction, so that a new browser counts once however many of its first
 * requests overlap (a page that makes several API calls at once):
 *
 * - The INSERT comes first. Its unique entry for the token makes every other
 *   request of the same browser wait at its own INSERT until this
 *   transaction ends, then find the row (ON CONFLICT DO NOTHING returns
 *   none): only the request that made the row counts a point.
 * - The point is counted on the same connection (on the embedded database,
 *   which serves every connection from one session, a statement on another
 *   connection would wait for this transaction to end: forever).
 * - Refused, the account is deleted before the commit: nobody ever sees it,
 *   and the point stays counted, as for a refused POST /api/accounts. A
 *   request that was waiting then makes the row itself, and is counted and
 *   refused in turn.
 *
 * The locks are always taken in that order (the token's entry, then the
 * address's window), so two browsers of one address cannot deadlock.
 */
async function makeBrowserAccount(
  { pool, admitNewAccount }: Authenticator,
  request: Request,
  tokenHash: string,
): Promise<MadeAccount> {
  return inTransaction(pool, async (tx): Promise<MadeAccount> => {
    const made = await tx.query<{ id: string }>(
      `INSERT INTO accounts (token_hash, kind) VALUES ($1, 'browser')
         ON CONFLICT (token_hash) DO NOTHING RETURNING id`,
      [tokenHash],
    );
    const accountId = made.rows[0]?.id;
    if (accountId === undefined) {
      // Made by an overlapping request that committed: READ COMMITTED lets this statement see it.
      const found = await tx.query<{ id: string; kind: string }>(
        `SELECT id, kind FROM accounts WHERE token_hash = $1`,
        [tokenHash],
      );
      const account = found.rows[0]!;
      return account.kind === "browser"
        ? { ok: true, accountId: account.id }
        : { ok: false, kind: "not-a-browser" };
    }
    const admitted = await admitNewAccount(request, tx);
    if (admitted.allowed) return { ok: true, accountId };
    await tx.query(`DELETE FROM accounts WHERE id = $1`, [accountId]);
    return { ok: false, kind: "rate-limited", retryAfterSeconds: admitted.retryAfterSeconds };
  });
}

/**
 * The account behind a browser's session token, for pages that show its
 * data (the orders, a key). Unlike an API call it creates nothing: a
 * session that never paid has no account, hence nothing to show.
 */
export async function findSessionAccount(
  db: PrismaClient,
  token: string | undefined,
): Promise<string | undefined> {
  if (token === undefined || !isIssuedSessionToken(token, sessionSecret())) return undefined;
  const account = await accountByTokenHash(db, hashToken(token));
  return account?.kind === "browser" ? account.id : undefined;
}
