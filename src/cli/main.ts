#!/usr/bin/env node
/**
 * The stagecoach executable: runs the command asked for (program.ts). Node's own heap settings
 * serve every command; nothing is tuned at run time.
 */
import { main } from './program.js';

await main(process.argv);
