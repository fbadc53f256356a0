import { EventHeap } from '../../lib/sim/heap';
import { Rng } from '../../lib/sim/rng';

test('events pop by time, and events at the same time in the order they were pushed, however many', () => {
  const rng = new Rng(7);
  const heap = new EventHeap(4);
  // Few distinct times, so most events tie; the payload records the push order.
  const pushed = Array.from({ length: 5000 }, (_, i) => ({ time: rng.int(0, 20), order: i }));
  for (const e of pushed) heap.push(e.time, e.order % 6, e.order);
  const popped: Array<{ time: number; order: number; kind: number }> = [];
  while (heap.size > 0) {
    popped.push({ time: heap.peekTime(), order: heap.topPayload(), kind: heap.topKind() });
    heap.pop();
  }
  const expected = [...pushed].sort((a, b) => a.time - b.time || a.order - b.order);
  expect(popped.map((e) => [e.time, e.order])).toEqual(expected.map((e) => [e.time, e.order]));
  expect(popped.every((e) => e.kind === e.order % 6)).toBe(true);
  expect(heap.peekTime()).toBe(Infinity);
});
