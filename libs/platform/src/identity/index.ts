export * from './principals.schema';
export * from './principal-directory';
export * from './oidc-verifier';
export * from './authenticator';
export * from './principal.guard';
