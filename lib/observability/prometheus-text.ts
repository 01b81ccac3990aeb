/**
 * Reads Prometheus's text format back into numbers, for tests that check
 * what an instance's /api/metrics says: `sample(text, name, labels)` is the
 * value of the one series with that name and exactly those labels.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const SAMPLE_LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parsePrometheusText(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    const match = SAMPLE_LINE.exec(line.trim());
    if (!match) continue;
    const labels = Object.fromEntries(
      [...(match[2] ?? "").matchAll(LABEL)].map(([, key, value]) => [key!, value!]),
    );
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

export function sample(
  text: string,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const wanted = Object.entries(labels);
  return parsePrometheusText(text).find(
    (candidate) =>
      candidate.name === name &&
      Object.keys(candidate.labels).length === wanted.length &&
      wanted.every(([key, value]) => candidate.labels[key] === value),
  )?.value;
}

/** The sum of every series of `name` whose labels include `labels`. */
export function total(text: string, name: string, labels: Record<string, string> = {}): number {
  return parsePrometheusText(text)
    .filter(
      (candidate) =>
        candidate.name === name &&
        Object.entries(labels).every(([key, value]) => candidate.labels[key] === value),
    )
    .reduce((sum, candidate) => sum + candidate.value, 0);
}
