/** Commands of this group are registered here as they are built. */
import type { Command } from 'commander';

export function registerPipelineCommands(_program: Command): void {}
