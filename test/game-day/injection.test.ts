import { limitsNotInForce, nodePoolCap, patchRefused, pinNotInForce, pinRefusal, scalableTargetPin } from '../../lib/core/game-day/injection';
import { variantResourceId } from '../../lib/core/platform/sagemaker-scalable-target';

describe('NodePool cap (the reference experiment\'s method)', () => {
  const pool = (limits: Record<string, string> | undefined, resources: Record<string, string> | undefined) => ({
    metadata: { name: 'sd21-inf2' }, spec: limits ? { limits } : {}, status: resources ? { resources, nodes: 2 } : {},
  });

  test('limits become what the pool has provisioned; the restore removes the limits it had not', () => {
    const cap = nodePoolCap(pool(undefined, { cpu: '8', memory: '32Gi', nodes: '2' }));
    expect(cap.cap).toEqual({ spec: { limits: { cpu: '8', memory: '32Gi', nodes: '2' } } });
    expect(cap.restore).toEqual({ spec: { limits: null } });
  });

  test('existing limits are kept when lower and put back exactly (keys the cap added are removed)', () => {
    const cap = nodePoolCap(pool({ cpu: '4', 'nvidia.com/gpu': '16' }, { cpu: '8', memory: '32Gi' }));
    expect(cap.after).toEqual({ cpu: '4', 'nvidia.com/gpu': '16', memory: '32Gi' });
    expect(cap.restore).toEqual({ spec: { limits: { cpu: '4', 'nvidia.com/gpu': '16', memory: null } } });
  });

  test('fails when the pool has provisioned nothing', () => {
    expect(() => nodePoolCap(pool(undefined, undefined))).toThrow('NodePool sd21-inf2 reports no status.resources: nothing provisioned to cap at');
  });
});

describe('SageMaker scalable target pin', () => {
  test('min = max = the current count, the bounds kept for the restore', () => {
    const id = variantResourceId('llm', 'preferred');
    expect(id).toBe('endpoint/llm/variant/preferred');
    expect(scalableTargetPin(id, { minCapacity: 1, maxCapacity: 8 }, 3)).toEqual({
      resourceId: id, before: { minCapacity: 1, maxCapacity: 8 }, after: { minCapacity: 3, maxCapacity: 3 },
    });
  });
  test('fails when the variant has no instance', () => {
    expect(() => scalableTargetPin('endpoint/llm/variant/p', { minCapacity: 1, maxCapacity: 8 }, 0)).toThrow('cannot be pinned below 1');
  });
  test('refused at or above MaxCapacity: the variant never grows past it, so the pin would take nothing away', () => {
    const bounds = { minCapacity: 1, maxCapacity: 8 };
    expect(pinRefusal('r', bounds, 7)).toBeUndefined();
    expect(pinRefusal('r', bounds, 8)).toBe('r already runs 8 instance(s), its scalable target\'s MaxCapacity (8): pinning it takes nothing away, '
      + 'since its scaling policies never take it past its MaxCapacity');
    expect(pinRefusal('r', bounds, 9)).toMatch(/^r already runs 9 instance\(s\), above its scalable target's MaxCapacity \(8\)/);
    expect(() => scalableTargetPin('r', bounds, 8)).toThrow('not injected: r already runs 8 instance(s)');
  });
});

describe('a kubectl patch the API server refused (nothing changed) against one whose outcome is unknown', () => {
  test.each([
    ['Error from server (Forbidden): nodepools.karpenter.sh "p" is forbidden: User "u" cannot patch resource "nodepools"', true],
    ['Error from server (NotFound): nodepools.karpenter.sh "p" not found', true],
    ['Error from server (BadRequest): invalid character', true],
    ['The NodePool "p" is invalid: spec.limits.cpu: Invalid value', true],
    ['error: You must be logged in to the server (Unauthorized)', true],
    ['Error from server (Timeout): the server was unable to return a response in the time allotted', false],
    ['Error from server (InternalError): Internal error occurred', false],
    ['Unable to connect to the server: net/http: request canceled (Client.Timeout exceeded while awaiting headers)', false],
    ['error: context deadline exceeded', false],
    ['no end within 120 s: stopped', false],
  ])('%s: refused %s', (stderr, refused) => {
    expect(patchRefused(`${stderr}\n`)).toBe(refused);
  });
});

describe('whether the cap or the pin still holds (read back during the hold)', () => {
  test('the cap: equal as written (a number and its string alike); a limit changed, removed or added is named with both values', () => {
    const set = { cpu: '16', memory: '64Gi', 'nvidia.com/gpu': 8 };
    expect(limitsNotInForce('p', { cpu: '16', memory: '64Gi', 'nvidia.com/gpu': '8' }, set)).toBeUndefined();
    expect(limitsNotInForce('p', { cpu: '1000', 'nvidia.com/gpu': 8, pods: '10' }, set)).toBe(
      'NodePool p spec.limits changed since the cap: cpu is 1000, the cap set 16; memory is none, the cap set 64Gi; pods is 10, the cap set none');
    expect(limitsNotInForce('p', undefined, { cpu: '16' })).toBe('NodePool p spec.limits changed since the cap: cpu is none, the cap set 16');
  });
  test('the pin: equal bounds hold; others, or no target, are said', () => {
    const pin = { minCapacity: 3, maxCapacity: 3 };
    expect(pinNotInForce('r', { minCapacity: 3, maxCapacity: 3 }, pin)).toBeUndefined();
    expect(pinNotInForce('r', { minCapacity: 3, maxCapacity: 10 }, pin)).toBe("r's scalable target is MinCapacity 3, MaxCapacity 10; the pin set 3, 3");
    expect(pinNotInForce('r', undefined, pin)).toBe('r has no scalable target any more (deregistered since the pin at 3..3)');
  });
});
