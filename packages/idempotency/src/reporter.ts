/**
 * Where the engine says what happened: a logger's three methods. The fields
 * name the key's row (`keyId`) and, for a failure, carry the `error`.
 */
export interface Reporter {
  info(event: string, fields: Record<string, unknown>): void;
  warn(event: string, fields: Record<string, unknown>): void;
  error(event: string, fields: Record<string, unknown>): void;
}

export const silentReporter: Reporter = {
  info() {},
  warn() {},
  error() {},
};
