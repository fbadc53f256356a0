/**
 * Seeded pseudo-random numbers (sfc32 seeded through splitmix32). Every stochastic choice in the simulator
 * draws from one of these, so a run is a pure function of its scenario and seed.
 */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;
  private spareNormal: number | undefined;

  constructor(seed: number) {
    let s = seed >>> 0;
    const splitmix = (): number => {
      s = (s + 0x9e3779b9) >>> 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.a = splitmix();
    this.b = splitmix();
    this.c = splitmix();
    this.d = splitmix();
    for (let i = 0; i < 12; i++) this.next();
  }

  /** Uniform in [0, 1). */
  next(): number {
    const t = (((this.a + this.b) >>> 0) + this.d) >>> 0;
    this.d = (this.d + 1) >>> 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) >>> 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) >>> 0;
    return t / 4294967296;
  }

  /** Uniform in [min, max). */
  uniform(min: number, max: number): number {
    return min + (max - min) * this.next();
  }

  /** Integer uniform in [min, max] (both inclusive). */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** Exponential with the given mean. */
  exponential(mean: number): number {
    return -mean * Math.log(1 - this.next());
  }

  /** Standard normal (Box-Muller, caching the second value). */
  normal(): number {
    if (this.spareNormal !== undefined) {
      const v = this.spareNormal;
      this.spareNormal = undefined;
      return v;
    }
    let u = 0;
    while (u === 0) u = this.next();
    const r = Math.sqrt(-2 * Math.log(u));
    const theta = 2 * Math.PI * this.next();
    this.spareNormal = r * Math.sin(theta);
    return r * Math.cos(theta);
  }

  /** Geometric number of trials (>= 1) with the given mean (>= 1). */
  geometric(mean: number): number {
    if (mean <= 1) return 1;
    const p = 1 / mean;
    return 1 + Math.floor(Math.log(1 - this.next()) / Math.log(1 - p));
  }

  /** Poisson count with the given mean (inversion for small means, normal approximation above 500). */
  poisson(mean: number): number {
    if (mean <= 0) return 0;
    if (mean > 500) return Math.max(0, Math.round(mean + Math.sqrt(mean) * this.normal()));
    const l = Math.exp(-mean);
    let k = 0;
    let p = this.next();
    while (p > l) {
      k++;
      p *= this.next();
    }
    return k;
  }

  /** An independent stream derived from this seed and a label, so adding a draw in one place does not shift others. */
  static derive(seed: number, label: string): Rng {
    let h = 2166136261 ^ (seed >>> 0);
    for (let i = 0; i < label.length; i++) h = Math.imul(h ^ label.charCodeAt(i), 16777619) >>> 0;
    return new Rng(h ^ Math.imul(seed >>> 0, 0x27d4eb2d));
  }
}
