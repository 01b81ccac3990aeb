/**
 * The default branch of a `switch` that must handle every case of a union.
 * TypeScript rejects the call when a case is missing, so adding a member to
 * the union (a new recovery point, say) fails to compile at each switch that
 * would otherwise quietly take a wrong path; at run time, a value that
 * bypassed the types (a row from the database) fails loudly instead.
 */
export function assertNever(value: never, what: string): never {
  throw new Error(`Unhandled ${what}: ${JSON.stringify(value)}`);
}
