import { limitsNotInForce, nodePoolCap, pinNotInForce, scalableTargetPin } from '../../lib/core/game-day/injection';
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
