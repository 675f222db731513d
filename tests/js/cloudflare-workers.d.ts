// What the types check needs of the Workers runtime's types (a Wrangler project has the
// real ones from @cloudflare/workers-types): the Durable Object base class.
declare module "cloudflare:workers" {
  export abstract class DurableObject<Env = unknown> {
    protected ctx: unknown;
    protected env: Env;
    constructor(ctx: unknown, env: Env);
  }
}
