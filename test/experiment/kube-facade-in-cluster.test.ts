// The shared experiment cases on the real-cluster platform with the client in a client Pod
// (`draincheck client` run by the embedded runtime behind the API facade): its observations
// reach the runner through the Pod log API, dated by the clock mapping.
import { kubeFacadeTarget } from '../helpers/kube-target.js';
import { defineExperimentSuite } from './shared-suite.js';

defineExperimentSuite(kubeFacadeTarget('in-cluster'), 'core');
