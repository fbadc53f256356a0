// What "pinned" and "approved" mean for images and model data: the rules the verifier, the admission policy and the
// signing CLI share.
export * from './image-reference';
export * from './artifact-verification';
