// The shared experiment cases on the embedded runtime: the protocol's core outcomes.
import { localTarget } from '../helpers/local-target.js';
import { defineExperimentSuite } from './shared-suite.js';

defineExperimentSuite(localTarget, 'core');
