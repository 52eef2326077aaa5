/**
 * Test support: a real embedded service with a demo-identity client on it, the environment that
 * points the CLI at it, and a scratch folder — what the CLI and client end-to-end tests share.
 */
import { createClient, type StagecoachClient } from '../../src/client/index.js';
import type { ServiceOptions } from '../../src/service/index.js';
import { DEMO, startTestService, tempDir, type TestService } from './service.js';

export interface ServiceWithClient {
  svc: TestService;
  client: StagecoachClient;
  /** Environment for `runCli` so the CLI talks to this service. */
  env: Record<string, string>;
  dir: string;
}

export async function startServiceWithClient(options: ServiceOptions = { webhookPollMs: 50 }): Promise<ServiceWithClient> {
  const svc = await startTestService(options);
  const client = createClient({
    baseUrl: svc.url,
    clientId: DEMO.clientId,
    clientSecret: DEMO.secret,
    brokerKey: DEMO.broker,
    labelReferenceId: DEMO.label,
  });
  return { svc, client, env: { STAGECOACH_BASE_URL: svc.url }, dir: tempDir('stagecoach-cli-') };
}

export async function stopServiceWithClient(f: Pick<ServiceWithClient, 'svc' | 'client'> | undefined): Promise<void> {
  await f?.client.close();
  await f?.svc.dispose();
}
