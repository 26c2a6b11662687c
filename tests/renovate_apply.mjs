// Carry out one update Renovate proposed, with Renovate's own code, as its branch worker does.
//
//   node renovate_apply.mjs RENOVATE_DIST JOB.json
//
// `renovate --platform=local` looks updates up and stops there: it writes no branch. This
// script takes up where it stopped, calling the installed Renovate's modules in the order
// its branch worker (workers/repository/update/branch) calls them:
//   1. util/git: clone the repository from JOB.remote into JOB.localDir, as Renovate clones
//      it (blobless, submodules left out);
//   2. the repository's own config with its presets resolved (the preset is fetched by URL),
//      and the report's updates made into branches (branchifyUpgrades);
//   3. getUpdatedPackageFiles: the custom manager's autoReplace edit of the manifest,
//      confirmed by extracting the file again;
//   4. executePostUpgradeCommands: the preset's postUpgradeTasks, allowed or refused by
//      JOB.allowedCommands, and the files they changed read back from git status;
//   5. commitFilesToBranch: `git reset --hard`, `git clean -fd`, the changed files written
//      and `git add`ed, the commit, and the push of JOB.branchName to the remote.
// It prints one JSON line: the commit, the files committed and the artifact errors.
//
// JOB: {remote, localDir, cacheDir, allowedCommands, hostRules, packageFiles (the report's, by manager),
// branchName (the branch of the update to make, as the report names it)}.
import fs from "node:fs";

const [dist, jobFile] = process.argv.slice(2);
const job = JSON.parse(fs.readFileSync(jobFile, "utf8"));
const load = (module) => import(`${dist}/${module}`);

const logger = await load("logger/index.js");
await logger.init();
const { GlobalConfig } = await load("config/global.js");
const { mergeChildConfig } = await load("config/utils.js");
const { resolveConfigPresets } = await load("config/presets/index.js");
const { getConfig } = await load("config/defaults.js");
const { branchifyUpgrades } = await load("workers/repository/updates/branchify.js");
const git = await load("util/git/index.js");
const hostRules = await load("util/host-rules.js");
const { setPlatformScmApi } = await load("modules/platform/scm.js");
const { getUpdatedPackageFiles } = await load("workers/repository/update/branch/get-updated.js");
const { default: executePostUpgradeCommands } = await load(
  "workers/repository/update/branch/execute-post-upgrade-commands.js",
);
const { commitFilesToBranch } = await load("workers/repository/update/branch/commit.js");

// A platform whose commits git makes and pushes (Gitea, GitLab, Bitbucket alike).
GlobalConfig.set({
  platform: "gitea",
  localDir: job.localDir,
  cacheDir: job.cacheDir,
  allowedCommands: job.allowedCommands,
});
setPlatformScmApi("gitea");
for (const rule of job.hostRules ?? []) {
  hostRules.add(rule, { trusted: true }); // the self-hosted config's, as an administrator's
}
fs.mkdirSync(job.localDir, { recursive: true });
await git.initRepo({ url: job.remote });
await git.syncGit();

git.setGitAuthor("Renovate Bot <renovate@whitesourcesoftware.com>"); // as initPlatform does

// The repository's config, its presets resolved, over Renovate's defaults; the report's
// package files turned into branches as the lookup's next step does (package rules
// applied, branch names and commit messages made).
const repoConfig = JSON.parse(fs.readFileSync(`${job.localDir}/renovate.json`, "utf8"));
const { config: resolved } = await resolveConfigPresets(repoConfig);
const config = { ...mergeChildConfig(getConfig(), resolved), baseBranch: "main", errors: [], warnings: [] };
const { branches } = await branchifyUpgrades(config, job.packageFiles);
const branch = branches.find((found) => found.branchName === job.branchName);
if (!branch) {
  throw new Error(`no branch ${job.branchName}: ${branches.map((found) => found.branchName)}`);
}

Object.assign(branch, await getUpdatedPackageFiles(branch));
const post = await executePostUpgradeCommands(branch);
if (post) {
  branch.updatedArtifacts = post.updatedArtifacts;
  branch.artifactErrors = post.artifactErrors;
}
const commit = await commitFilesToBranch(branch);
const paths = (files) => (files ?? []).map((file) => `${file.path}${file.type === "deletion" ? " (deleted)" : ""}`);
console.log(
  JSON.stringify({
    commit,
    updatedPackageFiles: paths(branch.updatedPackageFiles),
    updatedArtifacts: paths(branch.updatedArtifacts),
    artifactErrors: branch.artifactErrors ?? [],
  }),
);
