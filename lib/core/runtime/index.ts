export * from './admission';
export * from './contract';
export * from './engines';
