import { type App, Duration, type Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { type CapacityClassSpec } from '../../lib/core/service/capacity-class';
import {
  type EndpointVariantOptions,
  SageMakerCapacityEndpoint,
  type SageMakerCapacityEndpointProps,
} from '../../lib/sagemaker/endpoint';
import { LLAMA_CONTRACT, llamaClasses, testStack } from '../util';

/**
 * The three SageMaker classes of test/util (l40s on ml.g6e, a10g on ml.g5, inf2 on ml.inf2), in preference order, with
 * content-addressed model-data keys (SageMaker downloads whatever the key holds: the key must contain the SHA-256), and
 * their `.tar` archives as `.tar.gz` (SageMaker unpacks only gzip archives).
 */
export function smClasses(): CapacityClassSpec[] {
  return llamaClasses('ml.').map((c) => {
    const data = c.artifact.modelData;
    return data ? { ...c, artifact: { ...c.artifact, modelData: { ...data, uri: data.uri.replace(/(\.tar)(\.gz)?$/, `-${data.sha256}.tar.gz`) } } } : c;
  });
}

/** The A10G class moved to another instance type (to fill pools); `usdPerHour` for types without a catalog price. */
export function a10gOn(name: string, instanceType: string, usdPerHour = 1.5): CapacityClassSpec {
  const a10g = smClasses()[1];
  return { ...a10g, name, instanceType, usdPerHour };
}

export const TWO_VARIANTS: EndpointVariantOptions[] = [
  { name: 'preferred', classes: ['l40s', 'a10g'] },
  { name: 'fallback', classes: ['inf2'] },
];

export function endpointStack(props: Partial<SageMakerCapacityEndpointProps> = {}): { app: App; stack: Stack; endpoint: SageMakerCapacityEndpoint } {
  const { app, stack } = testStack();
  const endpoint = new SageMakerCapacityEndpoint(stack, 'Llama', {
    contract: LLAMA_CONTRACT,
    classes: smClasses(),
    variants: TWO_VARIANTS,
    provisionTimeout: Duration.minutes(15),
    ...props,
  });
  return { app, stack, endpoint };
}

/** The synth error of a stack, or '' when it synthesizes. */
export function synthError(stack: Stack): string {
  try {
    Template.fromStack(stack);
    return '';
  } catch (e) {
    return (e as Error).message;
  }
}
