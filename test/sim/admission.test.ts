/**
 * The simulator admits what the deployed servers admit: the classes carry `serverAdmission()` (the function the
 * runtime binding follows), and a class's queue applies its in-flight bound, vLLM's prompt-token budget and vLLM's
 * soft bound under bursts (vllm issue #58192: checked before rendering, counted after).
 */
import { serverAdmission } from '../../lib/core/runtime/admission';
import { ClassState, Pool, RENDER_SECONDS } from '../../lib/sim/class-state';
import { simClassesFromPlan } from '../../lib/sim/classes';
import { type SimClass } from '../../lib/sim/model';
import { llamaChatService } from '../../lib/sim/services';

const svc = llamaChatService();
const sim = simClassesFromPlan(svc.classes, svc.plan, svc.behavior, svc.contract);

test('every simulated class admits exactly what serverAdmission() says its server admits', () => {
  for (const cls of svc.classes) expect(sim.find((c) => c.name === cls.name)!.admission).toEqual(serverAdmission(cls, svc.contract));
  expect(sim.find((c) => c.name === 'l40s')!.admission).toMatchObject({ holdsUnderBursts: false, maxQueuedPromptTokens: expect.any(Number) });
  expect(sim.find((c) => c.name === 'inf2')!.admission).toMatchObject({ holdsUnderBursts: true });
});

/** A class with one ready replica and busy slots: every further request must queue. */
function queueOf(spec: SimClass): ClassState {
  const state = new ClassState(spec, [new Pool(spec, 1, 1)]);
  state.pools[0].readyCount = 1;
  return state;
}

/** Requests admitted into the queue when they arrive `gap` seconds apart, each with `prompt` tokens. */
function admittedOf(state: ClassState, count: number, gap: number, prompt: number): number {
  let admitted = 0;
  for (let i = 0; i < count; i++) {
    const now = 100 + i * gap;
    if (state.admitsQueued(now, prompt)) {
      state.enqueue(i, now, prompt);
      admitted++;
    }
  }
  return admitted;
}

test('a bound that holds under bursts admits its queue slots, spaced or simultaneous', () => {
  const inf2 = sim.find((c) => c.name === 'inf2')!;
  const slots = inf2.admission!.maxInFlight! - Math.floor(inf2.safeConcurrency);
  expect(admittedOf(queueOf(inf2), 50, 1, 10)).toBe(slots);
  expect(admittedOf(queueOf(inf2), 50, 0, 10)).toBe(slots);
});

test("vLLM's bound holds for spaced arrivals and not for a burst arriving together", () => {
  const l40s = sim.find((c) => c.name === 'l40s')!;
  const slots = l40s.admission!.maxInFlight! - Math.floor(l40s.safeConcurrency);
  expect(admittedOf(queueOf(l40s), 50, RENDER_SECONDS * 2, 10)).toBe(slots);
  expect(admittedOf(queueOf(l40s), 50, 0, 10)).toBe(50);
});

test("fails when vLLM's prompt-token budget is full: long prompts are shed before the request bound", () => {
  const l40s = sim.find((c) => c.name === 'l40s')!;
  const budget = l40s.admission!.maxQueuedPromptTokens!;
  const prompt = Math.floor(budget / 3) + 1;
  expect(admittedOf(queueOf(l40s), 50, RENDER_SECONDS * 2, prompt)).toBe(2);
});

test('a class whose server bounds nothing queues without limit', () => {
  const unbounded: SimClass = { ...sim[0], admission: { holdsUnderBursts: false, countsSequences: false } };
  expect(admittedOf(queueOf(unbounded), 500, 0.5, 10_000)).toBe(500);
});
