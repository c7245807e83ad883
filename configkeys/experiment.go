package configkeys

// The constructors keep the tables one line a key.
func effect(path, test, note string) Key {
	return Key{Path: path, Status: Effect, Test: test, Note: note}
}

func onKubernetes(path, test, refusal, note string) Key {
	return Key{Path: path, Status: Effect, Test: test, RefusedOn: "local", RefusalTest: refusal, Note: note}
}

func refused(path, test, note string) Key {
	return Key{Path: path, Status: Refused, Test: test, Note: note}
}

func kept(path, test, note string) Key { return Key{Path: path, Status: Kept, Test: test, Note: note} }

func elsewhere(path, owner, note string) Key {
	return Key{Path: path, Status: Elsewhere, Owner: owner, Note: note}
}

const (
	localMounts    = "TestBindMountsAProcessCannotBeGivenAreRefused"
	localContainer = "TestContainerSettingsAreRefusedWithTheirKeyAndTheReason"
)

// Experiment lists the keys of experiment configs and of the configs of
// commands, notebooks, shells and TensorBoards (expconf), with those of
// task_container_defaults in master.yaml, which land in them.
var Experiment = []Key{
	effect("name", "TestTheExperimentListFiltersSortsAndPages", "the experiment's name"),
	effect("description", "TestTheExperimentListFiltersSortsAndPages", "shown with the experiment or task"),
	effect("labels", "TestLabelsAreAddedAndRemovedInPlace", "the experiment's labels"),
	effect("entrypoint", "test_module_class_entrypoint_runs_through_the_trainer", "what a trial or command runs"),
	effect("data", "test_from_env", "the trials' det.get_cluster_info().user_data"),
	effect("debug", "TestADebugExperimentsTrialsRunWithDETDebug", "DET_DEBUG=true for the trials"),
	effect("max_restarts", "TestAFailedTrialRestartsUntilMaxRestartsThenErrors", "how often a failed trial is restarted"),
	effect("preemption_timeout", "TestAPausedTrialIsKilledOnceItsPreemptionTimeoutPassesOnTheAdmissionClock", "how long a preempted trial may take to stop"),
	effect("project", "TestExperimentsAreCreatedByUsersInProjectsNotArchived", "the project the experiment goes in"),
	effect("workspace", "TestExperimentsAreCreatedByUsersInProjectsNotArchived", "the workspace of that project"),
	effect("checkpoint_policy", "TestCheckpointGCKeepsWhatThePolicySays", "which checkpoints are kept: best, all or none"),
	effect("perform_initial_validation", "test_checkpoint_period_and_initial_validation_from_the_config", "the PyTorch trainer validates before training"),
	effect("min_validation_period", "test_max_length_from_the_config_and_test_mode", "the PyTorch trainer's validation period (deprecated, warned)"),
	effect("min_checkpoint_period", "test_checkpoint_period_and_initial_validation_from_the_config", "the PyTorch trainer's checkpoint period (deprecated, warned)"),
	effect("scheduling_unit", "test_paused_and_resumed_matches_an_uninterrupted_run", "the PyTorch trainer's reporting period (deprecated, warned)"),
	effect("optimizations", "test_gradient_aggregation_equals_a_batch_twice_as_large", "aggregation_frequency only; its other keys warn that they are ignored"),
	kept("records_per_epoch", "TestParseExperimentLegacyConfigWarns", "warns that it is ignored: an epoch is the data loader's length"),
	kept("tensorboard_storage", "TestParseExperimentAccepts", "warns that it is ignored: TensorBoard files go with checkpoints"),
	refused("template", "TestParseExperimentRejects", "templates are chosen when submitting (det --template)"),
	refused("internal", "TestParseExperimentRejects", "reserved; must be null"),
	refused("slurm", "TestParseExperimentRejects", "a Determined Enterprise Edition key"),
	refused("pbs", "TestParseExperimentRejects", "a Determined Enterprise Edition key"),
	refused("security", "TestParseExperimentRejects", "a Determined Enterprise Edition key"),

	effect("reproducibility", "TestSearchesWithoutASeedGetDifferentRandomSeedsAndTheSeedReproducesOne", "the seed section"),
	effect("reproducibility.experiment_seed", "TestSearchesWithoutASeedGetDifferentRandomSeedsAndTheSeedReproducesOne", "the search's and the trials' seed"),

	effect("profiling", "test_profiling_enabled_in_the_config_turns_it_on_for_the_trial", "the trial's system-metrics profiler"),
	effect("profiling.enabled", "test_profiling_enabled_in_the_config_turns_it_on_for_the_trial", "turns the profiler on"),
	effect("profiling.begin_on_batch", "test_the_window_holds_the_batches_from_begin_to_end", "where the profiled window begins"),
	effect("profiling.end_after_batch", "test_the_window_holds_the_batches_from_begin_to_end", "where it ends"),
	effect("profiling.sync_timings", "test_sync_timings_waits_for_the_gpu_at_each_edge_of_the_window", "waits for the GPU at the window's edges"),

	effect("hyperparameters", "TestRandomSamplingRanges", "the search space"),
	effect("hyperparameters.*", "TestRandomSamplingRanges", "a hyperparameter: a constant, or a map with type"),
	effect("hyperparameters.*.type", "TestRandomSamplingRanges", "const, int, double, log or categorical"),
	effect("hyperparameters.*.val", "TestParseExperimentAccepts", "a const's value"),
	effect("hyperparameters.*.minval", "TestRandomSamplingRanges", "a range's low end"),
	effect("hyperparameters.*.maxval", "TestRandomSamplingRanges", "a range's high end"),
	effect("hyperparameters.*.base", "TestRandomSamplingRanges", "a log range's base"),
	effect("hyperparameters.*.count", "TestGridValues", "a range's number of grid points"),
	effect("hyperparameters.*.vals", "TestGridValues", "a categorical's values"),
	effect("hyperparameters.*.*", "TestGridPointsAreTheProductInDeterminedOrder", "a nested hyperparameter"),
	effect("hyperparameters.*.*.type", "TestGridPointsAreTheProductInDeterminedOrder", "a nested hyperparameter's type"),
	effect("hyperparameters.*.*.val", "TestParseExperimentAccepts", "a nested const's value"),

	effect("searcher", "TestAnASHASearchRunsToTheEnd", "how trials are searched"),
	effect("searcher.name", "TestAnASHASearchRunsToTheEnd", "single, random, grid, adaptive_asha or async_halving"),
	effect("searcher.metric", "TestASHAHundredTrialsPromoteTheBest", "the validation metric searched on"),
	effect("searcher.smaller_is_better", "TestASHALargerIsBetter", "the metric's direction"),
	effect("searcher.max_trials", "TestMaxConcurrentTrials", "how many trials"),
	effect("searcher.max_concurrent_trials", "TestMaxConcurrentTrials", "how many run at once"),
	effect("searcher.max_time", "TestASHABracketLayout", "ASHA's training budget in time_metric units"),
	effect("searcher.time_metric", "TestASHAConfigErrors", "the metric that counts ASHA's time"),
	effect("searcher.mode", "TestASHABracketLayout", "ASHA's brackets: aggressive, standard or conservative"),
	effect("searcher.divisor", "TestASHABracketLayout", "ASHA's reduction factor"),
	effect("searcher.max_rungs", "TestASHABracketLayout", "ASHA's rungs"),
	effect("searcher.num_rungs", "TestASHABracketLayout", "async_halving's rungs"),
	effect("searcher.bracket_rungs", "TestASHABracketLayout", "ASHA's rungs per bracket"),
	effect("searcher.max_length", "TestAnExperimentsProgressCountsItsRunningTrials", "the trials' length (deprecated, warned): progress and the trainer"),
	kept("searcher.stop_once", "TestParseExperimentLegacyConfigWarns", "warns that ASHA always stops trials early"),
	effect("searcher.source_trial_id", "TestAWarmStartBeginsTrialsFromTheNamedCheckpoint", "starts trials from that trial's checkpoint"),
	effect("searcher.source_checkpoint_uuid", "TestAWarmStartBeginsTrialsFromTheNamedCheckpoint", "starts trials from that checkpoint"),

	effect("resources", "TestBuildPodsTrial", "what the work needs"),
	effect("resources.slots_per_trial", "TestATwoWorkerTrialUploadsOneShardedCheckpoint", "slots (GPUs or CPUs) of each trial"),
	effect("resources.slots", "TestPodLayout", "slots of a command, notebook or shell"),
	effect("resources.max_slots", "TestAPatchKeepsTheRulesOfEachEdit", "the most slots the experiment holds at once"),
	effect("resources.weight", "TestTwoUsersShareSlotsByWeightUnderFairShare", "the fair-share weight"),
	effect("resources.priority", "TestAHigherPriorityExperimentPreemptsALowerOneThatResumes", "the priority (and on Kubernetes the PriorityClass)"),
	effect("resources.resource_pool", "TestTheJobQueuePageShowsThePoolAndItsFormsChangeIt", "the pool the work runs in"),
	effect("resources.is_single_node", "TestATrialKeptOnOneNodeMustFitOnePod", "true: Kubernetes refuses a trial of more slots than one pod holds; the local resource manager is one machine"),
	kept("resources.native_parallel", "TestParseExperimentAccepts", "warns that it is ignored"),
	kept("resources.agent_label", "TestParseExperimentAccepts", "warns that it is ignored: use resource_pool"),
	onKubernetes("resources.shm_size", "TestShmSizeDevicesAndCapabilitiesAreInThePodTheAPIServerKeeps", localContainer, "a memory-backed /dev/shm of that size"),
	onKubernetes("resources.devices", "TestShmSizeDevicesAndCapabilitiesAreInThePodTheAPIServerKeeps", localContainer, "host devices in the container"),
	onKubernetes("resources.devices[].host_path", "TestShmSizeDevicesAndCapabilitiesAreInThePodTheAPIServerKeeps", localContainer, "the device on the node"),
	onKubernetes("resources.devices[].container_path", "TestShmSizeDevicesAndCapabilitiesAreInThePodTheAPIServerKeeps", localContainer, "where the container sees it"),
	onKubernetes("resources.devices[].mode", "TestContainerSettingsAPodCannotExpressAreRefused", localContainer, "read-only without w"),

	onKubernetes("bind_mounts", "TestBuildPodsMountsBindMountsAndStorageAsHostPaths", localMounts, "host directories in the task (local: at their own path only)"),
	onKubernetes("bind_mounts[].host_path", "TestBuildPodsMountsBindMountsAndStorageAsHostPaths", localMounts, "the directory on the host"),
	onKubernetes("bind_mounts[].container_path", "TestBuildPodsMountsBindMountsAndStorageAsHostPaths", localMounts, "where the task sees it (local: must be host_path)"),
	onKubernetes("bind_mounts[].read_only", "TestBuildPodsMountsBindMountsAndStorageAsHostPaths", localMounts, "a read-only mount"),
	refused("bind_mounts[].propagation", "TestParseExperimentRejects", "only rprivate/private, how every mount is made"),

	effect("environment", "TestLaunchSetsEnvironment", "the task's environment"),
	effect("environment.environment_variables", "TestCheckpointsInABucketAreCollectedDownloadedAndDeleted", "variables of the task's processes"),
	effect("environment.environment_variables.cpu", "TestATrialWithSlotsGetsTheCUDAImageAndVariablesAndOneWithoutTheCPUOnes", "those of CPU tasks"),
	effect("environment.environment_variables.cuda", "TestATrialWithSlotsGetsTheCUDAImageAndVariablesAndOneWithoutTheCPUOnes", "those of GPU tasks"),
	kept("environment.environment_variables.rocm", "TestParseExperimentAccepts", "kept: Resolute schedules no ROCm devices"),
	{Path: "environment.image", Status: Effect, Test: "TestBuildPodsTrial",
		Note: "Kubernetes: the container image; local: recorded, with a log line in the task's log, as tasks run without containers (TestLaunchGivesTasksTheHarnessAndTheTaskPython)"},
	effect("environment.image.cpu", "TestATrialWithSlotsGetsTheCUDAImageAndVariablesAndOneWithoutTheCPUOnes", "the image of CPU tasks (Kubernetes)"),
	effect("environment.image.cuda", "TestATrialWithSlotsGetsTheCUDAImageAndVariablesAndOneWithoutTheCPUOnes", "the image of GPU tasks (Kubernetes)"),
	effect("environment.image.gpu", "TestBuildPodsTrial", "the old name of cuda"),
	kept("environment.image.rocm", "TestParseExperimentAccepts", "kept: Resolute schedules no ROCm devices"),
	onKubernetes("environment.pod_spec", "TestBuildPodsMergesPodSpecs", localContainer, "merged into the task's pods"),
	onKubernetes("environment.force_pull_image", "TestPodsOfEveryTaskTypeAreAcceptedWithPoolNamespacesPriorityAndCoscheduler", localContainer, "imagePullPolicy Always"),
	onKubernetes("environment.registry_auth", "TestPodsOfEveryTaskTypeAreAcceptedWithPoolNamespacesPriorityAndCoscheduler", localContainer, "an image pull secret"),
	effect("environment.registry_auth.username", "TestPodsOfEveryTaskTypeAreAcceptedWithPoolNamespacesPriorityAndCoscheduler", "Kubernetes: in the pull secret"),
	effect("environment.registry_auth.password", "TestPodsOfEveryTaskTypeAreAcceptedWithPoolNamespacesPriorityAndCoscheduler", "Kubernetes: in the pull secret"),
	effect("environment.registry_auth.auth", "TestPodsOfEveryTaskTypeAreAcceptedWithPoolNamespacesPriorityAndCoscheduler", "Kubernetes: in the pull secret"),
	effect("environment.registry_auth.email", "TestPodsOfEveryTaskTypeAreAcceptedWithPoolNamespacesPriorityAndCoscheduler", "Kubernetes: in the pull secret"),
	effect("environment.registry_auth.serveraddress", "TestPodsOfEveryTaskTypeAreAcceptedWithPoolNamespacesPriorityAndCoscheduler", "Kubernetes: the registry of the pull secret"),
	refused("environment.registry_auth.identitytoken", "TestParseExperimentRejects", "Docker's token keys: use username and password"),
	refused("environment.registry_auth.registrytoken", "TestParseExperimentRejects", "Docker's token keys: use username and password"),
	onKubernetes("environment.add_capabilities", "TestShmSizeDevicesAndCapabilitiesAreInThePodTheAPIServerKeeps", localContainer, "the container's added capabilities"),
	onKubernetes("environment.drop_capabilities", "TestShmSizeDevicesAndCapabilitiesAreInThePodTheAPIServerKeeps", localContainer, "the container's dropped capabilities"),
	refused("environment.ports", "TestParseExperimentRejects", "nothing read it; use proxy_ports"),
	effect("environment.proxy_ports", "TestProxyPortsReachTheirTaskForItsOwnerOnly", "ports reached with det task tunnel, or over HTTP at /proxy/TASK:PORT/, by the owner"),
	effect("environment.proxy_ports[].proxy_port", "TestProxyPortsReachTheirTaskForItsOwnerOnly", "the task's port"),
	effect("environment.proxy_ports[].proxy_tcp", "TestHTTPProxyPortsAreServedOnTheTaskOriginToTheirOwnerOnly",
		"false (the default): served over HTTP on the task origin at /proxy/TASK:PORT/ (trials: TASK is trial-N) to the owner; true: det task tunnel only"),
	refused("environment.proxy_ports[].unauthenticated", "TestProxyPortsThatWouldOpenATaskToOthersAreRefused", "true is refused: ports are their owner's only"),
	refused("environment.proxy_ports[].default_service_id", "TestProxyPortsThatWouldOpenATaskToOthersAreRefused", "true is refused: a port is never the task's page"),

	effect("checkpoint_storage", "TestWhichCheckpointStorageAnExperimentGets", "where checkpoints go"),
	effect("checkpoint_storage.type", "TestWhichCheckpointStorageAnExperimentGets", "shared_fs, directory, s3, gcs or azure"),
	effect("checkpoint_storage.save_experiment_best", "TestCheckpointGCKeepsWhatThePolicySays", "checkpoints kept after the experiment"),
	effect("checkpoint_storage.save_trial_best", "TestCheckpointGCKeepsWhatThePolicySays", "best checkpoints kept per trial"),
	effect("checkpoint_storage.save_trial_latest", "TestCheckpointGCKeepsWhatThePolicySays", "latest checkpoints kept per trial"),
	effect("checkpoint_storage.host_path", "TestACheckpointGCTaskRemovesExactlyItsCheckpoints", "shared_fs: the directory"),
	effect("checkpoint_storage.storage_path", "test_shared_fs_checkpoints_go_under_host_path_and_storage_path", "shared_fs: a directory under host_path"),
	effect("checkpoint_storage.container_path", "TestACheckpointGCTaskFailsWhereItsStorageIsNotMounted", "directory: the storage's path; shared_fs: warns that it is ignored"),
	kept("checkpoint_storage.checkpoint_path", "TestParseExperimentAccepts", "warns that it is ignored"),
	kept("checkpoint_storage.tensorboard_path", "TestParseExperimentAccepts", "warns that it is ignored"),
	refused("checkpoint_storage.propagation", "TestParseExperimentRejects", "only rprivate/private"),
	effect("checkpoint_storage.bucket", "TestPythonBuckets", "s3, gcs: the bucket"),
	effect("checkpoint_storage.prefix", "TestPythonBuckets", "s3, gcs, azure: a prefix in it"),
	effect("checkpoint_storage.access_key", "TestPythonBuckets", "s3: the access key"),
	effect("checkpoint_storage.secret_key", "TestPythonBuckets", "s3: the secret key"),
	effect("checkpoint_storage.endpoint_url", "TestPythonBuckets", "s3: an S3-compatible endpoint"),
	effect("checkpoint_storage.container", "TestPythonBuckets", "azure: the container"),
	effect("checkpoint_storage.connection_string", "TestPythonBuckets", "azure: the connection string"),
	effect("checkpoint_storage.account_url", "TestPythonBuckets", "azure: the account URL"),
	effect("checkpoint_storage.credential", "TestPythonBuckets", "azure: the credential"),

	effect("log_policies", "TestALogPolicyCancelsTheRetriesOfATrialThatPrintsItsPattern", "regexes that cancel retries or exclude a node"),
	effect("log_policies[].name", "TestALogPolicyCancelsTheRetriesOfATrialThatPrintsItsPattern", ""),
	effect("log_policies[].pattern", "TestALogPolicyCancelsTheRetriesOfATrialThatPrintsItsPattern", ""),
	effect("log_policies[].action", "TestALogPolicyCancelsTheRetriesOfATrialThatPrintsItsPattern", ""),
	effect("log_policies[].action.type", "TestALogPolicyCancelsTheRetriesOfATrialThatPrintsItsPattern", ""),
	effect("retention_policy", "TestRetentionDeletesOnlyTheOldLogsOfExperimentsNotKeptLonger", "how long the experiment's logs are kept"),
	effect("retention_policy.log_retention_days", "TestRetentionDeletesOnlyTheOldLogsOfExperimentsNotKeptLonger", ""),
	effect("integrations", "TestParseExperimentAccepts", "the integrations section"),
	effect("integrations.webhooks", "TestASpecificTaskLogWebhookFiresOnlyForExperimentsThatNameIt", "which webhooks fire for the experiment"),
	effect("integrations.webhooks.webhook_id", "TestWhichWebhooksFireForAnExperiment", ""),
	effect("integrations.webhooks.webhook_name", "TestASpecificTaskLogWebhookFiresOnlyForExperimentsThatNameIt", ""),
	effect("integrations.webhooks.exclude", "TestWhichWebhooksFireForAnExperiment", ""),
	kept("integrations.pachyderm", "TestParseExperimentAccepts", "warns that Resolute has no Pachyderm integration"),

	effect("idle_timeout", "TestAnIdleNotebookIsTerminatedWithTheReasonInItsLog", "a notebook, shell or TensorBoard ends after this long idle"),
	effect("notebook_idle_type", "TestJupyterIdleFollowsTheNotebookIdleType", "what counts as a notebook's activity"),
	effect("tensorboard_args", "TestATensorBoardServesItsExperimentsFilesToItsOwnerOnly", "more arguments of tensorboard"),
	refused("work_dir", "TestParseTaskRejects", "a task starts in its context directory"),
}
