import { KubectlV34Layer } from '@aws-cdk/lambda-layer-kubectl-v34';
import { Template } from 'aws-cdk-lib/assertions';
import { EksInferenceService, type EksInferenceServiceProps } from '../../lib/eks/inference-service';
import { FETCHER_IMAGE, LLAMA_CONTRACT, llamaClasses, renderWithPlaceholders, testStack } from '../util';
import { created, type JsonObject, kubectlApply, kubectlMergePatch } from './kubectl-apply';

/** The ScaledObject of class `a10g` exactly as the Scaler manifest hands it to kubectl. */
function deployedScaledObject(props: Partial<EksInferenceServiceProps>, withReconciler: boolean): JsonObject {
  const { stack } = testStack();
  const service = new EksInferenceService(stack, 'Llama', {
    contract: LLAMA_CONTRACT, classes: llamaClasses(), modelDataFetcherImage: FETCHER_IMAGE, kubectlLayer: new KubectlV34Layer(stack, 'Kubectl'), ...props,
  });
  if (withReconciler) service.enableReplicaFloors();
  const logicalId = stack.resolve((service.units[1].manifests.scaler.node.defaultChild as unknown as { logicalId: string }).logicalId);
  const scaler = Template.fromStack(stack).toJSON().Resources[logicalId];
  const [so] = JSON.parse(renderWithPlaceholders(scaler.Properties.Manifest)) as JsonObject[];
  return so;
}

type Triggers = { spec: { triggers: { name: string }[]; maxReplicaCount: number } };
const triggerNames = (o: JsonObject) => (o as unknown as Triggers).spec.triggers.map((t) => t.name);
const maxReplicas = (o: JsonObject) => (o as unknown as Triggers).spec.maxReplicaCount;

/** KEDA writes status on the live object: the three-way merge must leave what it does not own alone. */
const KEDA_STATUS: JsonObject = { conditions: [{ type: 'Ready', status: 'True' }], hpaName: 'keda-hpa-llama3-chat-a10g' };

describe('replica floor across an update (kubectl apply of the ScaledObject, a three-way JSON merge patch)', () => {
  test('the floor trigger survives a change of maxReplicas: it is part of the applied ScaledObject', () => {
    const v1 = deployedScaledObject({}, true);
    const v2 = deployedScaledObject({ classOptions: { a10g: { maxReplicas: 6 } } }, true);
    expect(triggerNames(v1)).toEqual(['per-replica-load', 'replica-floor']);
    expect(maxReplicas(v2)).toBe(6);
    expect(maxReplicas(v1)).not.toBe(6);

    const live = created(v1, KEDA_STATUS);
    const { patch, result } = kubectlApply(live, v2);
    // Only what changed is sent: triggers are equal in current and modified, so the patch leaves the list alone.
    expect((patch.spec as JsonObject).triggers).toBeUndefined();
    expect(triggerNames(result)).toEqual(['per-replica-load', 'replica-floor']);
    expect(maxReplicas(result)).toBe(6);
    expect(result.status).toEqual(KEDA_STATUS);
  });

  test('a floor trigger added by a separate merge patch (the previous design) is dropped by the same update', () => {
    const v1 = deployedScaledObject({}, false);
    const v2 = deployedScaledObject({ classOptions: { a10g: { maxReplicas: 6 } } }, false);
    const floored = deployedScaledObject({}, true);
    // kubectl create --save-config, then kubectl patch --type merge with the load and floor triggers.
    const live = kubectlMergePatch(created(v1, KEDA_STATUS), { spec: { triggers: (floored.spec as JsonObject).triggers } });
    expect(triggerNames(live)).toEqual(['per-replica-load', 'replica-floor']);
    const { result } = kubectlApply(live, v2);
    // current (load + floor) differs from modified (load alone): the list is replaced whole.
    expect(triggerNames(result)).toEqual(['per-replica-load']);
  });

  test('attaching a reconciler later adds the floor on the next apply; enableReplicaFloors is idempotent', () => {
    const { stack } = testStack();
    const service = new EksInferenceService(stack, 'Llama', {
      contract: LLAMA_CONTRACT, classes: llamaClasses(), modelDataFetcherImage: FETCHER_IMAGE, kubectlLayer: new KubectlV34Layer(stack, 'Kubectl'),
    });
    const first = service.enableReplicaFloors();
    const second = service.enableReplicaFloors();
    expect(second.map((so) => so.spec.triggers.length)).toEqual(first.map(() => 2));
    const live = created(deployedScaledObject({}, false), KEDA_STATUS);
    const { result } = kubectlApply(live, deployedScaledObject({}, true));
    expect(triggerNames(result)).toEqual(['per-replica-load', 'replica-floor']);
  });

  test('retainFloorPatches: off with retainFloorPatches false, so no patch is left once a stack has migrated', () => {
    const { stack } = testStack();
    const service = new EksInferenceService(stack, 'Llama', {
      contract: LLAMA_CONTRACT, classes: llamaClasses(), modelDataFetcherImage: FETCHER_IMAGE, kubectlLayer: new KubectlV34Layer(stack, 'Kubectl'),
      retainFloorPatches: false,
    });
    service.enableReplicaFloors();
    expect(Template.fromStack(stack).findResources('Custom::AWSCDK-EKS-KubernetesPatch')).toEqual({});
  });

  test('retainFloorPatches (the default for a service with its own cluster): the old FloorTrigger patches stay, and their removal restores nothing', () => {
    const { stack } = testStack();
    // Not set: a stack upgraded from the release that added the floor as patches keeps it without reading the CHANGELOG.
    const service = new EksInferenceService(stack, 'Llama', {
      contract: LLAMA_CONTRACT, classes: llamaClasses(), modelDataFetcherImage: FETCHER_IMAGE, kubectlLayer: new KubectlV34Layer(stack, 'Kubectl'),
    });
    service.enableReplicaFloors();
    const patches = Template.fromStack(stack).findResources('Custom::AWSCDK-EKS-KubernetesPatch');
    // The logical ids the previous release gave these patches (read from its synthesized template): updated in place.
    expect(Object.keys(patches).sort()).toEqual(['LlamaFloorTriggera10g12592957', 'LlamaFloorTriggerinf2D2848451', 'LlamaFloorTriggerl40s894A3B56']);
    const live = created(deployedScaledObject({}, true), KEDA_STATUS);
    const a10g = Object.values(patches).find((r) => r.Properties.ResourceName === 'scaledobject.keda.sh/llama3-chat-a10g')!;
    // The apply patch (run on every Create/Update) is the triggers the ScaledObject already has: no change.
    expect(kubectlMergePatch(live, JSON.parse(renderWithPlaceholders(a10g.Properties.ApplyPatchJson)) as JsonObject)).toEqual(live);
    for (const r of Object.values(patches)) expect(r.Properties.RestorePatchJson).toBe('{}');
  });

  test('fails when removing the retained patches, in a deploy that also changes the triggers, restores the old ones', () => {
    // The deploy that sets retainFloorPatches: false also changes the load trigger's target.
    const before = deployedScaledObject({}, true);
    const after = deployedScaledObject({ retainFloorPatches: false, classOptions: { a10g: { targetRequestsPerReplicaPerPeriod: 999 } } }, true);
    type Targets = { spec: { triggers: { metadata: { targetMetricValue: string } }[] } };
    const targetOf = (o: JsonObject) => (o as unknown as Targets).spec.triggers[0].metadata.targetMetricValue;
    expect(targetOf(after)).toBe('999');
    expect(targetOf(before)).not.toBe('999');
    // CloudFormation updates the ScaledObject (kubectl apply), then deletes the patch resources in its cleanup phase.
    const updated = kubectlApply(created(before, KEDA_STATUS), after).result;
    expect(targetOf(updated)).toBe('999');
    const { stack } = testStack();
    const service = new EksInferenceService(stack, 'Llama', {
      contract: LLAMA_CONTRACT, classes: llamaClasses(), modelDataFetcherImage: FETCHER_IMAGE, kubectlLayer: new KubectlV34Layer(stack, 'Kubectl'),
    });
    service.enableReplicaFloors();
    const patch = Object.values(Template.fromStack(stack).findResources('Custom::AWSCDK-EKS-KubernetesPatch'))
      .find((r) => r.Properties.ResourceName === 'scaledobject.keda.sh/llama3-chat-a10g')!;
    const restored = kubectlMergePatch(updated, JSON.parse(renderWithPlaceholders(patch.Properties.RestorePatchJson)) as JsonObject);
    expect(restored).toEqual(updated);

    // A restore of the triggers of the patch's last deploy (the design this replaces) brings the old target back; it
    // stays until the ScaledObject's manifest next changes (nothing re-applies an unchanged manifest). That next apply
    // does repair it: current (stale) and modified differ, so the three-way merge sends the triggers.
    const stale = kubectlMergePatch(updated, { spec: { triggers: (before.spec as JsonObject).triggers } });
    expect(targetOf(stale)).not.toBe('999');
    const next = deployedScaledObject({
      retainFloorPatches: false, classOptions: { a10g: { targetRequestsPerReplicaPerPeriod: 999, maxReplicas: 6 } },
    }, true);
    expect(targetOf(kubectlApply(stale, next).result)).toBe('999');
  });
});
