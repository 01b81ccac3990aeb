/**
 * Set to "1" by `npm test` (scripts/test-all.mts) for the phases after its
 * type check has passed, so that the build does not check the same types
 * again (next.config.ts).
 */
export const TYPES_CHECKED_ENV = "ONCEPAY_TYPES_CHECKED";
