import {
  describeNodeEndpoints, endpointServiceName, ISOLATED_NODE_SUBNET_ENDPOINTS, missingNodeEndpoints, parseEndpointServiceName,
} from '../../lib/core/platform/isolated-node-endpoints';

describe('the VPC endpoints of isolated node subnets', () => {
  test('what the nodes need to join fails synth, what a feature needs warns (the EKS guide, the VPC CNI, Pod Identity)', () => {
    expect(ISOLATED_NODE_SUBNET_ENDPOINTS.map((e) => [e.service, e.need, e.gateway])).toEqual([
      ['ec2', 'join', false], ['ecr.api', 'join', false], ['ecr.dkr', 'join', false], ['s3', 'join', true],
      ['eks-auth', 'feature', false], ['logs', 'feature', false],
    ]);
    for (const e of ISOLATED_NODE_SUBNET_ENDPOINTS) expect(e.source).toMatch(/https:\/\/|lib\//);
    expect(describeNodeEndpoints('join', 'us-east-1')).toBe('com.amazonaws.us-east-1.ec2, com.amazonaws.us-east-1.ecr.api, '
      + 'com.amazonaws.us-east-1.ecr.dkr and com.amazonaws.us-east-1.s3');
  });

  test("names endpoints with their partition's prefix (aws-cdk-lib's getDefaultEndpointPrefix), China's noted without a region", () => {
    expect(endpointServiceName('ec2', 'cn-north-1')).toBe('cn.com.amazonaws.cn-north-1.ec2');
    expect(endpointServiceName('ecr.dkr', 'cn-northwest-1')).toBe('cn.com.amazonaws.cn-northwest-1.ecr.dkr');
    expect(endpointServiceName('s3', 'cn-north-1')).toBe('com.amazonaws.cn-north-1.s3');
    expect(endpointServiceName('logs', 'cn-north-1')).toBe('com.amazonaws.cn-north-1.logs');
    expect(endpointServiceName('ecr.api', 'eusc-de-east-1')).toBe('eu.amazonaws.eusc-de-east-1.ecr.api');
    expect(endpointServiceName('ec2', 'eusc-de-east-1')).toBe('com.amazonaws.eusc-de-east-1.ec2');
    expect(describeNodeEndpoints('join', 'cn-north-1')).toBe('cn.com.amazonaws.cn-north-1.ec2, cn.com.amazonaws.cn-north-1.ecr.api, '
      + 'cn.com.amazonaws.cn-north-1.ecr.dkr and com.amazonaws.cn-north-1.s3');
    expect(describeNodeEndpoints('join')).toBe('com.amazonaws.<region>.ec2, com.amazonaws.<region>.ecr.api, com.amazonaws.<region>.ecr.dkr '
      + 'and com.amazonaws.<region>.s3 (cn.com.amazonaws.<region>.{ec2,ecr.api,ecr.dkr} in China)');
    expect(describeNodeEndpoints('feature')).toBe('com.amazonaws.<region>.eks-auth and com.amazonaws.<region>.logs');
  });

  test('reads the region and service of an endpoint service name, in any partition, a region token as *', () => {
    expect(parseEndpointServiceName('com.amazonaws.us-east-1.ecr.api')).toEqual({ region: 'us-east-1', service: 'ecr.api' });
    expect(parseEndpointServiceName('cn.com.amazonaws.cn-north-1.s3')).toEqual({ region: 'cn-north-1', service: 's3' });
    expect(parseEndpointServiceName('com.amazonaws.*.s3')).toEqual({ region: '*', service: 's3' });
    // The European Sovereign Cloud's region (aws-cdk-lib region-info) and its ECR prefix (aws-ec2/lib/vpc-endpoint.js getDefaultEndpointPrefix).
    expect(parseEndpointServiceName('eu.amazonaws.eusc-de-east-1.ecr.api')).toEqual({ region: 'eusc-de-east-1', service: 'ecr.api' });
    expect(parseEndpointServiceName('com.amazonaws.eusc-de-east-1.s3')).toEqual({ region: 'eusc-de-east-1', service: 's3' });
    expect(parseEndpointServiceName('com.amazonaws.vpce.us-east-1.vpce-svc-0123456789abcdef0')).toBeUndefined();
    expect(parseEndpointServiceName('my-endpoint-service')).toBeUndefined();
  });

  test('lists the missing ones of a need, in order', () => {
    expect(missingNodeEndpoints(new Set(['ecr.api', 'logs']), 'join').map((e) => e.service)).toEqual(['ec2', 'ecr.dkr', 's3']);
    expect(missingNodeEndpoints(new Set(['ecr.api', 'logs']), 'feature').map((e) => e.service)).toEqual(['eks-auth']);
  });
});
