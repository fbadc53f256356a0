export * from './gate';
export * from './artifact-trust';
export {
  ApprovedImagesAdmission, type ApprovedImagesAdmissionProps, type ApprovedImagesPolicyOptions, type ValidatingAdmissionPolicy,
  type ValidatingAdmissionPolicyBinding,
} from './admission-policy';
