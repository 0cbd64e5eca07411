// The project's one seeded pseudo-random generator: the demo dataset, the
// benchmark names and the fuzz tests all draw from it, so a seed means the
// same stream everywhere and Math.random is never used for data.

export function mix32(x: number): number {
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b);
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
  return (x ^ (x >>> 16)) >>> 0;
}

/** xoshiro128** (Blackman and Vigna), seeded through splitmix32 so nearby seeds give unrelated streams. */
export class Prng {
  private s0: number;
  private s1: number;
  private s2: number;
  private s3: number;

  constructor(seed: number) {
    let x = seed >>> 0;
    const next = (): number => {
      x = (x + 0x9e3779b9) >>> 0;
      return mix32(x);
    };
    this.s0 = next();
    this.s1 = next();
    this.s2 = next();
    this.s3 = next() | 1; // never the all-zero state
  }

  u32(): number {
    const s1 = this.s1;
    const r = Math.imul(s1, 5);
    const result = Math.imul((r << 7) | (r >>> 25), 9) >>> 0;
    const t = s1 << 9;
    this.s2 ^= this.s0;
    this.s3 ^= this.s1;
    this.s1 ^= this.s2;
    this.s0 ^= this.s3;
    this.s2 ^= t;
    this.s3 = (this.s3 << 11) | (this.s3 >>> 21);
    return result;
  }

  /** Uniform in [0, 1). */
  float(): number {
    return this.u32() / 4_294_967_296;
  }

  /** Uniform integer in [0, n). */
  below(n: number): number {
    return Math.floor(this.float() * n);
  }

  chance(p: number): boolean {
    return this.float() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.below(items.length)]!;
  }

  /** Index into a list ordered by popularity: low indexes far more often (Zipf-like). */
  skewed(n: number, power = 2.5): number {
    return Math.floor(n * this.float() ** power);
  }

  /** Heavy-tailed value >= 1 (Pareto with shape alpha). */
  pareto(alpha: number): number {
    return (1 - this.float()) ** (-1 / alpha);
  }

  /** Random string of `length` characters from `alphabet`. */
  text(length: number, alphabet: string): string {
    let s = '';
    for (let i = 0; i < length; i++) s += alphabet[this.below(alphabet.length)];
    return s;
  }
}

/** A [0, 1) stream for code that only needs floats. */
export function seededRandom(seed: number): () => number {
  const p = new Prng(seed);
  return () => p.float();
}
