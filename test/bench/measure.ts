/** Sequential in-process load: requests per second and latency percentiles of one async operation. */
export interface Stats {
  name: string;
  ops: number;
  perSecond: number;
  p50: number;
  p99: number;
}

export async function measure(name: string, op: () => Promise<unknown>, { warmup = 500, count = 5000 } = {}): Promise<Stats> {
  for (let i = 0; i < warmup; i++) await op();
  const samples = new Float64Array(count);
  const start = performance.now();
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    await op();
    samples[i] = performance.now() - t0;
  }
  const total = performance.now() - start;
  samples.sort();
  return {
    name,
    ops: count,
    perSecond: (count / total) * 1000,
    p50: samples[Math.floor(count * 0.5)],
    p99: samples[Math.floor(count * 0.99)],
  };
}

/**
 * Runs the candidates in alternating rounds and keeps each one's best round, so a burst of noise
 * on a 2-core machine does not decide the ratio.
 */
export async function compare(
  candidates: { name: string; op: () => Promise<unknown> }[],
  options: { rounds?: number; warmup?: number; count?: number } = {},
): Promise<Stats[]> {
  const best = new Map<string, Stats>();
  for (let round = 0; round < (options.rounds ?? 3); round++) {
    for (const { name, op } of candidates) {
      const stats = await measure(name, op, options);
      const previous = best.get(name);
      if (!previous || stats.perSecond > previous.perSecond) best.set(name, stats);
    }
  }
  return candidates.map(({ name }) => best.get(name)!);
}

export function print(title: string, stats: Stats[], ratio?: { of: string; to: string; target: number }): void {
  console.log(`\n## ${title}`);
  for (const s of stats) {
    console.log(`  ${s.name.padEnd(44)} ${s.perSecond.toFixed(0).padStart(7)} req/s   p50 ${s.p50.toFixed(3)} ms   p99 ${s.p99.toFixed(3)} ms`);
  }
  if (ratio) {
    const of = stats.find((s) => s.name === ratio.of)!;
    const to = stats.find((s) => s.name === ratio.to)!;
    const value = of.perSecond / to.perSecond;
    console.log(`  ratio ${ratio.of} / ${ratio.to}: ${value.toFixed(2)} (target >= ${ratio.target}) ${value >= ratio.target ? "OK" : "BELOW TARGET"}`);
  }
}
