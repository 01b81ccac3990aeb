const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether an id from a URL can name a row at all: anything else is a 404 without asking the database (whose uuid column would refuse it). */
export function isUuid(value: string): boolean {
  return UUID_PATTERN.test(value);
}
