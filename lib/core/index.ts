export * from './tokens';
export * from './routing-facts';
