export * from './tokens';
export * from './routing-facts';
export * from './policy';
