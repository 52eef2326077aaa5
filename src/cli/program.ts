/**
 * The stagecoach command. Commands only parse flags, call the library and print; each group of
 * commands registers itself from its own module.
 */
import { Command } from 'commander';
import { registerServeCommands } from './commands/serve.js';
import { registerClientCommands } from './commands/client-commands.js';
import { registerPipelineCommands } from './commands/pipeline-commands.js';
import { registerMigrateCommands } from './commands/migrate-commands.js';
import { registerInitCommand } from './commands/init-command.js';
import { registerPrivacyCommands } from './commands/privacy-commands.js';
import { registerUpgradeCommand } from './commands/upgrade-command.js';
import { registerApplicationsCommand } from './commands/applications-command.js';
import { runCli } from './run.js';

export async function main(argv: readonly string[]): Promise<void> {
  const program = new Command('stagecoach')
    .description('Carry legacy customer data into the lending platform through its migration API')
    .version('0.1.0')
    // Before any command is registered: commander copies it into each subcommand as it is made,
    // so a usage error inside a subcommand exits 2 like one at the top.
    .exitOverride();

  registerInitCommand(program);
  registerServeCommands(program);
  registerClientCommands(program);
  registerPipelineCommands(program);
  registerMigrateCommands(program);
  registerPrivacyCommands(program);
  registerUpgradeCommand(program);
  registerApplicationsCommand(program);

  await runCli(program, argv);
}
