// The shared adversarial cases (servers that break the contract) on the real-cluster
// platform through the API facade. The client runs here, against the ClusterIP: a client Pod
// starts too late to see the first refusals of a slow-starting server, which one case needs.
import { kubeFacadeTarget } from '../helpers/kube-target.js';
import { defineExperimentSuite } from './shared-suite.js';

defineExperimentSuite(kubeFacadeTarget('local'), 'adversarial');
