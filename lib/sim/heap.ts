/**
 * Binary min-heap of timed events, stored in typed arrays (no object per event): the simulator pushes one
 * completion per request, so allocation-free pushes and pops are what keeps a suite run in minutes. Events at the same
 * time pop in the order they were pushed, so a run does not depend on the heap's layout.
 */
export class EventHeap {
  private times: Float64Array;
  private seqs: Float64Array;
  private kinds: Int32Array;
  private payloads: Int32Array;
  private count = 0;
  private pushed = 0;

  constructor(capacity = 1024) {
    this.times = new Float64Array(capacity);
    this.seqs = new Float64Array(capacity);
    this.kinds = new Int32Array(capacity);
    this.payloads = new Int32Array(capacity);
  }

  get size(): number {
    return this.count;
  }

  /** Time of the earliest event, or +Infinity when empty. */
  peekTime(): number {
    return this.count > 0 ? this.times[0] : Infinity;
  }

  push(time: number, kind: number, payload: number): void {
    if (this.count === this.times.length) this.grow();
    let i = this.count++;
    const seq = this.pushed++;
    const times = this.times;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.before(parent, time, seq)) break;
      this.move(parent, i);
      i = parent;
    }
    times[i] = time;
    this.seqs[i] = seq;
    this.kinds[i] = kind;
    this.payloads[i] = payload;
  }

  /** Removes the earliest event; read it first with peekTime/topKind/topPayload. */
  pop(): void {
    const n = --this.count;
    if (n === 0) return;
    const times = this.times;
    const seqs = this.seqs;
    const time = times[n];
    const seq = seqs[n];
    const kind = this.kinds[n];
    const payload = this.payloads[n];
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && this.before(child + 1, times[child], seqs[child])) child++;
      if (!this.before(child, time, seq)) break;
      this.move(child, i);
      i = child;
    }
    times[i] = time;
    seqs[i] = seq;
    this.kinds[i] = kind;
    this.payloads[i] = payload;
  }

  /** Whether the event at index `i` comes before one at time `t` pushed as the `q`th (the same time: pushed sooner). */
  private before(i: number, t: number, q: number): boolean {
    return this.times[i] < t || (this.times[i] === t && this.seqs[i] < q);
  }

  private move(from: number, to: number): void {
    this.times[to] = this.times[from];
    this.seqs[to] = this.seqs[from];
    this.kinds[to] = this.kinds[from];
    this.payloads[to] = this.payloads[from];
  }

  topKind(): number {
    return this.kinds[0];
  }

  topPayload(): number {
    return this.payloads[0];
  }

  private grow(): void {
    const size = this.times.length * 2;
    const times = new Float64Array(size);
    times.set(this.times);
    const seqs = new Float64Array(size);
    seqs.set(this.seqs);
    const kinds = new Int32Array(size);
    kinds.set(this.kinds);
    const payloads = new Int32Array(size);
    payloads.set(this.payloads);
    this.times = times;
    this.seqs = seqs;
    this.kinds = kinds;
    this.payloads = payloads;
  }
}
