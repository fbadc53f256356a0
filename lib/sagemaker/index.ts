export * from './endpoint';
export * from './variants';
export { ClassModel, type ClassModelProps, modelDataSource } from './class-model';
export { hasInstanceStorage } from './instance-storage';
