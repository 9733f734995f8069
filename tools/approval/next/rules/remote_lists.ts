/**
 * Lists the generic remote judges (../remote.ts) read: production names, CLIs judged by the words of their
 * verbs, launchers, container options, HTTP paths that name a whole store, SQL effects. Data, not code.
 */
import type { ClassKey } from "../classes.js";
import type { Rule } from "./types.js";

/** A namespace, context or environment name that says production, alone or set (`--namespace=prod`). */
export const PRODUCTION_SETTING = /^(--(namespace|context)=)?(prod|production|live)([-_.].*)?$|[-_.](prod|production)$/;

/** Branches others build on: a force-push to one rewrites their history. */
export const SHARED_REF =
  /^\+?(refs\/heads\/)?(HEAD:)?(main|master|trunk|develop|prod|production|release([/-].*)?|stable)$/;

/**
 * kubectl kinds whose deletion takes down a service or its data (a single pod or job is rescheduled), also
 * as `KIND/NAME` or `KIND.GROUP`, in any case.
 */
export const WORKLOAD_KINDS =
  /^(ns|namespace|namespaces|pv|pvc|persistentvolume|persistentvolumes|persistentvolumeclaim|persistentvolumeclaims|node|nodes|crd|crds|deploy|deployment|deployments|deploys|sts|statefulset|statefulsets|ds|daemonset|daemonsets|svc|service|services|ingress|ingresses|ing|project|projects|storageclass|storageclasses|sc|secret|secrets|application|applications|hpa|rs|replicaset|replicasets|cronjob|cronjobs|cj|all|mutatingwebhookconfiguration|validatingwebhookconfiguration)([/.]|$)/i;

/**
 * Infrastructure, platform and service CLIs judged by the words of their verbs (a verb never seen before is
 * read by its parts: `pg:reset` → reset, `stop-instances` → stop). Tools with rows of their own above and in
 * ../rules.ts are judged there as well.
 */
export const INFRA_CLIS = new Set([
  "az",
  "gcloud",
  "doctl",
  "hcloud",
  "linode-cli",
  "fly",
  "flyctl",
  "heroku",
  "vercel",
  "netlify",
  "railway",
  "render",
  "wrangler",
  "oci",
  "ibmcloud",
  "scw",
  "exo",
  "vultr-cli",
  "upctl",
  "aliyun",
  "tccli",
  "civo",
  "koyeb",
  "cf",
  "eb",
  "sam",
  "copilot",
  "pscale",
  "neonctl",
  "neon",
  "turso",
  "upstash",
  "mongocli",
  "confluent",
  "databricks",
  "snow",
  "certbot",
  "auth0",
  "okta",
  "stripe",
  "twilio",
  "doppler",
  "infisical",
  "op",
  "bw",
  "vault",
  "nomad",
  "consul",
  "boundary",
  "packer",
  "gh",
  "glab",
  "tea",
  "circleci",
  "velero",
  "argocd",
  "flux",
  "helm",
  "eksctl",
  "kind",
  "minikube",
  "k3d",
  "rancher",
  "borg",
  "restic",
  "snapper",
  "ceph",
  "rbd",
  "security",
  "openstack",
  "virsh",
  "vagrant",
  "multipass",
  "lxc",
  "incus",
  "pulumi",
  "cdk",
  "serverless",
  "sls",
  "wsl",
  "vssadmin",
  "wmic",
  "helmfile",
  "cdktf",
  "juju",
  "kapp",
  "algolia",
  "rpk",
  "gluster",
]);

/**
 * The class a destroying verb of an INFRA_CLIS program names, by program or `program verb` (the first verb
 * word); infra_teardown when neither is listed. Workloads of a cluster, volumes and backups, key-value stores.
 */
export const VERB_CLASSES = new Map(
  Object.entries<ClassKey>({
    helm: "cluster_teardown",
    eksctl: "cluster_teardown",
    kind: "cluster_teardown",
    minikube: "cluster_teardown",
    k3d: "cluster_teardown",
    "nomad job": "cluster_teardown",
    "gcloud container": "cluster_teardown",
    "az aks": "cluster_teardown",
    "doctl kubernetes": "cluster_teardown",
    "gcloud storage": "cloud_storage_delete",
    argocd: "cluster_teardown",
    flux: "cluster_teardown",
    kapp: "cluster_teardown",
    velero: "volume_destroy",
    snapper: "volume_destroy",
    restic: "volume_destroy",
    borg: "volume_destroy",
    ceph: "volume_destroy",
    rbd: "volume_destroy",
    gluster: "volume_destroy",
    vssadmin: "volume_destroy",
    "wmic shadowcopy": "volume_destroy",
    "virsh vol-delete": "volume_destroy",
    "virsh pool-delete": "volume_destroy",
    "consul kv": "cache_flush",
    rpk: "cache_flush",
  }),
);

/** Verbs (or parts of one) that destroy, empty, stop or cut off. */
export const DESTRUCTIVE_VERBS =
  /^(destroy|delete|remove|rm|del|purge|reset|drop|wipe|erase|terminate|stop|disable|revoke|deregister|unregister|truncate|flush|kill|uninstall|deactivate|suspend|shutdown|poweroff|halt|decommission|nuke|teardown|forget|prune|undefine|leave|labelclear|unregister|deletion)$/;

/** Words that make the command a read, a listing or a plan. */
export const READ_VERBS =
  /^(list|ls|show|get|describe|status|info|view|inspect|logs?|history|whoami|version|help|search|watch|tail|browse|open|diff|plan|validate|check|test|explain|print|export|download|cat|read|preview|what-if|config|completion|snapshots|stats|usage|ps|images|top|events)$/;

/** Programs whose global options come before the verb and take a value (`helm --kube-context X delete`). */
export const VALUED_GLOBALS =
  /^(-n|--namespace|--context|--kube-context|--kubeconfig|-H|--host|-c|--config|-C|-p|--project|--profile|--region|-r|-g|--resource-group|-s|--subscription|-o|--org|-a|--app|--cluster|--zone)$/;

/** Container images whose entry point is a tool (`docker run hashicorp/terraform destroy`): the tool's name. */
export const IMAGE_TOOLS = new Map(
  Object.entries<string>({
    terraform: "terraform",
    tofu: "tofu",
    opentofu: "tofu",
    terragrunt: "terragrunt",
    pulumi: "pulumi",
    "aws-cli": "aws",
    "azure-cli": "az",
    "cloud-sdk": "gcloud",
    kubectl: "kubectl",
    helm: "helm",
    doctl: "doctl",
    flyctl: "fly",
    "gh-cli": "gh",
    curl: "curl",
  }),
);

/** Host folders of a bind mount written with variables: the current directory and home. */
export const HOST_DIRS = { here: /^(\$PWD|\$\{PWD\}|\$\(pwd\)|`pwd`)(?=:|\/)/, home: /^(\$HOME|\$\{HOME\})(?=:|\/)/ };

/** `docker run` options that take the next word as their value. */
export const CONTAINER_VALUED = new Set(
  "-v --volume -e --env --env-file -w --workdir --name -p --publish --mount --network --net --entrypoint -u --user -l --label --platform --pull --restart -m --memory --cpus -h --hostname --add-host --device --cap-add --cap-drop --security-opt --tmpfs --ulimit --log-driver --log-opt --shm-size --gpus --ipc --pid --dns --cidfile --runtime -a --attach --group-add --stop-signal --stop-timeout --health-cmd --link --volumes-from".split(
    " ",
  ),
);

/**
 * Tools that run shell text on other hosts, judged as a line run on a server (with raised rights): after `--`
 * (`fab -H web1 -- CMD`), the last word (`knife ssh QUERY CMD`), or an option's value (`gcloud compute ssh VM
 * --command CMD`, `--command=CMD`), less `strip`; `verbs` must all be present.
 */
export const REMOTE_RUNNERS = new Map(
  Object.entries<{ verbs: string[]; option?: RegExp; last?: boolean; strip?: RegExp }>({
    // fab, invoke and pyinfra are wrappers (rules/wrappers.ts SHELL_TEXT_TAKERS): what follows `--` is unwrapped there
    fab2: { verbs: [] },
    inv: { verbs: [] },
    knife: { verbs: ["ssh"], last: true },
    gcloud: { verbs: ["ssh"], option: /^--command(=|$)/ },
    az: { verbs: ["run-command"], option: /^--scripts(=|$)/ },
    aws: {
      verbs: ["send-command"],
      option: /^--parameters(=|$)/,
      strip: /^commands=|^\{\s*"commands"\s*:\s*\[\s*"|"\s*\]\s*\}$/g,
    },
  }),
);

/**
 * Deletes fed by xargs from a listing the line does not show (`gsutil ls … | xargs gsutil rm`, `docker volume
 * ls -q | xargs docker volume rm`): as many deletes as there are lines. Program → the verb that deletes and the class.
 */
export const FED_DELETES = new Map(
  Object.entries<{ verb: RegExp; key: Rule["key"] }[]>({
    aws: [
      { verb: /^(rm|rb)$/, key: "cloud_storage_delete" },
      { verb: /^(delete-\S+|terminate-instances|deregister-\S+)$/, key: "infra_teardown" },
    ],
    gsutil: [{ verb: /^(rm|rb)$/, key: "cloud_storage_delete" }],
    gcloud: [{ verb: /^delete$/, key: "infra_teardown" }],
    az: [{ verb: /^delete$/, key: "infra_teardown" }],
    s3cmd: [{ verb: /^(rm|del|rb)$/, key: "cloud_storage_delete" }],
    s5cmd: [{ verb: /^(rm|rb)$/, key: "cloud_storage_delete" }],
    rclone: [{ verb: /^(delete|purge|deletefile)$/, key: "cloud_storage_delete" }],
    mc: [{ verb: /^(rm|rb)$/, key: "cloud_storage_delete" }],
    kubectl: [{ verb: /^delete$/, key: "cluster_teardown" }],
    oc: [{ verb: /^delete$/, key: "cluster_teardown" }],
    helm: [{ verb: /^(uninstall|delete)$/, key: "cluster_teardown" }],
    doctl: [{ verb: /^(delete|rm)$/, key: "infra_teardown" }],
    gh: [{ verb: /^delete$/, key: "infra_teardown" }],
    vault: [{ verb: /^(delete|destroy)$/, key: "infra_teardown" }],
    "redis-cli": [{ verb: /^(del|unlink)$/i, key: "cache_flush" }],
    "valkey-cli": [{ verb: /^(del|unlink)$/i, key: "cache_flush" }],
    "keydb-cli": [{ verb: /^(del|unlink)$/i, key: "cache_flush" }],
  }),
);

/** Tools told what to do through the environment: the program, its arguments, the variable (`NAME=value`). */
export const ENV_EFFECTS: { program: RegExp; args: RegExp; env: RegExp; key: Rule["key"]; what: string }[] = [
  {
    program: /^(terraform|tofu|terragrunt)$/,
    args: /(^|\s)apply(\s|$)/,
    env: /^TF_CLI_ARGS\w*=.*-destroy\b/,
    key: "infra_teardown",
    what: "told to destroy through TF_CLI_ARGS",
  },
  {
    program: /^(docker|podman|docker-compose|nerdctl)$/,
    args: /(^|\s)(rm|rmi|stop|kill|down|prune|restart)(\s|$)/,
    env: /^(DOCKER_HOST|CONTAINER_HOST)=(tcp|ssh):\/\/|^DOCKER_CONTEXT=(prod|production|live)\b/,
    key: "cluster_teardown",
    what: "removes or stops containers on a shared daemon",
  },
  {
    program: /^git$/,
    args: /(^|\s)(reset\s(.*\s)?--hard|clean\s(.*\s)?-[a-zA-Z]*f)(\s|$)/,
    env: /^GIT_(DIR|WORK_TREE)=(\/(etc|usr|srv|opt|var|home|root|boot)(\/|$)|~)/,
    key: "git_reset_hard",
    what: "discards the work of a repository in a system or home folder",
  },
];

/** A ref a feature branch is reset to (`origin/feature/x`): routine, unlike `origin/main`, `HEAD~3`, `@{u}`. */
export const FEATURE_REF = /^(origin|upstream)\/(?!(main|master)$)\S+$/;

/** A trial or help run: nothing changes (`-h` counts only as the last word: `mysql -h HOST` names a host). */
export const TRIAL_WORD =
  /^(--dry-run(=(client|server|true|1))?|--dryrun|--dry_run|--help|-help|--what-if|--noop|--validate|--check|--preview-only)$/;

/** HTTP: words naming a URL (a scheme, a loopback or IP address, `:PORT/`, `$BASE/`, `host.tld/…`), and bodies. */
export const HTTP = {
  url: /^(https?:\/\/|localhost|\d+(\.\d+){3}|:\d*\/|\$\{?\w+\}?\/|[a-z\d-]+(\.[a-z\d-]+)*\.[a-z]{2,}(:\d+)?\/)/i,
  /** query parameters that widen a request to everything (`?all=true`, Solr's `deleteIndex=true`) */
  bulkQuery: /[?&](all|purge|recursive|force|cascade|delete\w*)=(true|1|yes)\b/i,
  credentials:
    /(^|\s)(Authorization|X-Api-Key|X-Auth-Token|Private-Token)\s*:|(^|\s)(-u|--user|--auth|--oauth2-bearer)(\s|$)/i,
  local: /^(localhost|127(\.\d+){3}|0\.0\.0\.0|\[::1\])$/i,
  /** a URL's host, path and query (scheme, user and port skipped) */
  parts: /^(?:https?:\/\/)?(?:[^@/]*@)?(\[[^\]]*\]|[^/:?#]*)(?::\d+)?([^?#]*)(\?[^#]*)?/i,
  method: /(^|\s)(-[a-zA-Z]*X\s*|--request[= ]|--method[= ])(DELETE|PUT|PATCH|POST)(\s|$)/i,
  /** whole-index deletes and purges, whatever the method */
  wipes: [
    {
      test: /^(?=[\s\S]*\/_delete_by_query\b)(?![\s\S]*"query"\s*:\s*\{\s*"(?!match_all))/,
      key: "http_delete",
      what: "deletes every document of an index",
    },
    {
      test: /<delete>\s*<query>\s*\*:\*\s*<\/query>|"delete"\s*:\s*\{\s*"query"\s*:\s*"\*:\*"/i,
      key: "http_delete",
      what: "deletes every document of a Solr core",
    },
    {
      test: /"purge_everything"\s*:\s*true|purge_everything=true|\/purge_?all\b|\/purge-all\b|\/flushall\b/i,
      key: "cache_flush",
      what: "purges a whole cache",
    },
  ] as { test: RegExp; key: Rule["key"]; what: string }[],
  /** the last path segment of a collection (REST names them in the plural) */
  collection: /^[a-z][a-z_-]*s$/i,
  /** a POST to an endpoint named for a bulk delete, with an empty filter or none */
  bulkPost: /\/(bulk[-_]?delete|delete[-_]?all|purge|wipe|truncate|reset[-_]?all)(\?|\s|$)/i,
};

/** Database and cache clients whose input (arguments, stdin, `-f FILE`) is read as SQL or store commands. */
export const DB_CLIENTS =
  /^(nc|ncat|netcat|telnet|psql|mysql|mariadb|sqlite3|sqlcmd|clickhouse-client|clickhouse|cqlsh|mongo|mongosh|cypher-shell|redis-cli|valkey-cli|keydb-cli|bq|duckdb|snowsql|trino|presto|usql|pgcli|mycli|litecli|cockroach|influx)$/;

/** Clients of a database in a local file: on a file inside the working directory the data is the task's own. */
export const FILE_DATABASES = /^(sqlite3|duckdb|litecli)$/;
/** Their options that take a value (`sqlite3 -cmd SQL DB`): the value is not the database file. */
export const FILE_DB_VALUED =
  /^--?(cmd|init|separator|newline|nullvalue|c|s|f|o|readonly-attached|ascii-separator|output|execute|init-file)$/;

/** Key-value store clients: their options with a value come before the command word. */
export const KV_CLIENTS = /^(redis|valkey|keydb)-cli$/;
export const KV_VALUED = /^-(h|p|a|n|u|s|r|i|d|D|-user|-pass|-askpass|-cacert|-cert|-key|-sni)$/;

/** What a statement is read without, in order: quotes around all of it, its comments, its string literals' text. */
export const SQL_NOISE: [RegExp, string][] = [
  [/^(["'])([^"']*)\1$/, "$2"],
  [/\/\*[\s\S]*?\*\/|(^|\s)--[^\n]*/g, " "],
  [/'(?:[^'\n]|'')*'/g, "''"],
];

/** A table the same SQL text creates (a temporary one, or one that did not exist before: no IF NOT EXISTS). */
export const CREATED_TABLE =
  /\bcreate\s+(?:(?:temp|temporary)\s+table\s+(?:if\s+not\s+exists\s+)?|table\s+(?!if\b))([\w."]+)/gi;

/** The last path segment before an id that names a whole store rather than one of its records. */
export const STORE_SEGMENTS =
  /^(indexes|indices|index|collections|collection|buckets|bucket|databases|database|dbs|db|keyspaces|tables|zones|topics|queues|vhosts|exchanges|namespaces|projects|repos|repositories|schemas|clusters|volumes|snapshots|streams|datasets|spaces|tenants)$/i;

/** Examples of the generic remote judges (verbs of infrastructure CLIs, launchers, scale to zero, HTTP). */
/**
 * What one SQL or store statement does, read without its comments and string literals (`LIKE '%DROP
 * TABLE%'` passes) unless `raw` (grants and passwords are read with their literals). First match wins.
 */
export const SQL_EFFECTS: { test: RegExp; key: Rule["key"]; raw?: boolean }[] = [
  { test: /\bredis\.call\s*\(\s*['"](del|unlink|flushall|flushdb)['"]/i, key: "cache_flush", raw: true },
  // every right handed out, or an account opened to anyone: `GRANT ALL … TO PUBLIC`, SUPERUSER, default passwords
  {
    test: /\bgrant\s+all\b[^;]*\bto\s+(public\b|\S*@\s*'%')|\bwith\s+grant\s+option\b/i,
    key: "privilege_grant",
    raw: true,
  },
  { test: /\b(alter|create)\s+(user|role)\b[^;]*\b(superuser|createrole)\b/i, key: "privilege_grant", raw: true },
  {
    test: /\b(alter|create)\s+(user|role)\b[^;]*\b(password|identified\s+by)\s+'(|password|postgres|root|admin|changeme|123456)'/i,
    key: "privilege_grant",
    raw: true,
  },
  // a password set to something short (guessable), or the root account's password changed
  {
    test: /\b(alter|create)\s+(user|role)\b[^;]*\b(password|identified\s+by)\s+'[^']{1,7}'|\bset\s+password\s+for\s+'?root'?/i,
    key: "user_change",
    raw: true,
  },
  { test: /\balter\s+table\s+\S+\s+drop\s+(column\s+)?[\w"`]/i, key: "sql_drop" },
  {
    test: /\bdrop\s+(table|database|schema|keyspace|user|role|view|collection|owned|materialized\s+view)\b|\bdropDatabase\s*\(|\.drop\s*\(\s*\)|\bdropAll\b/i,
    key: "sql_drop",
  },
  { test: /\btruncate\s+(table\s+)?[\w."`]/i, key: "sql_truncate" },
  // the server itself stopped
  { test: /\bshutdownServer\s*\(|^\s*shutdown(\s+(with\s+nowait|immediate|abort))?\s*;?\s*$/im, key: "stop_service" },
  {
    test: /^\s*(delete\s+from|alter\s+table\s+\S+\s+delete)\s*[\w."`]*\s*(where\s+(1\s*=\s*1|true|1)\s*)?$|\bdelete\s+from\s+[\w."`]+\s*(where\s+(1\s*=\s*1|true)\s*)?$/i,
    key: "sql_delete_without_where",
  },
  {
    test: /\bdeleteMany\s*\(\s*\{\s*\}\s*\)|\bremove\s*\(\s*\{\s*\}\s*\)|\bmatch\s*\(\s*\w*\s*\)\s*(detach\s+)?delete\b/i,
    key: "sql_delete_without_where",
  },
  {
    test: /^\s*update\s+[\w."`]+\s+set\b(?!.*\bwhere\b(?!\s+(1\s*=\s*1|true)\s*$))/is,
    key: "sql_update_without_where",
  },
  { test: /\bupdateMany\s*\(\s*\{\s*\}/i, key: "sql_update_without_where" },
  { test: /^\s*(flushall|flushdb|flush_all)\b/i, key: "cache_flush" },
];

/** A git remote given as a URL (`https://…`, `ssh://…`, `git@host:owner/repo`), not a configured remote's name. */
export const GIT_URL = /^[a-z][a-z0-9+.-]*:\/\/|^[\w.-]+@[\w.-]+:/i;

export const GENERIC_REMOTE_EXAMPLES = {
  flag: [
    "git remote add copy https://github.com/someone/x.git && git push copy --all",
    "git push --mirror git@example.com:someone/x.git",
    "gh repo delete acme/legacy-api --yes",
    "az keyvault secret purge --vault-name kv-prod --name db-password",
    "velero backup delete --all --confirm",
    "helm --kube-context staging delete redis",
    "docker service scale api=0",
    "aws autoscaling update-auto-scaling-group --auto-scaling-group-name web --desired-capacity 0",
    "curl -X DELETE 'http://localhost:9200/logs-*'",
    "curl -X POST 'http://es:9200/orders/_delete_by_query' -d '{\"query\":{\"match_all\":{}}}'",
    "bundle exec rails db:drop",
    "helmfile -e production destroy",
    'psql -c "UPDATE accounts SET balance = 0 WHERE true"',
    "mongosh app --eval 'db.users.updateMany({}, {$set: {plan: \"free\"}})'",
    "TF_CLI_ARGS_apply='-auto-approve -destroy' terraform apply",
    "DOCKER_HOST=ssh://deploy@prod-1 docker compose down",
    "GIT_DIR=/srv/app/.git git reset --hard HEAD~2",
    "aws sqs purge-queue --queue-url https://sqs.us-east-1.amazonaws.com/1/jobs",
    "mysql -h db.prod -e 'DROP DATABASE shop'",
    "psql -tc \"SELECT 'DROP TABLE ' || tablename || ';' FROM pg_tables\" | psql",
    'curl -X DELETE https://api.example.com/v1/users -H "Authorization: Bearer $T"',
    'curl -X DELETE "https://api.example.com/v1/users?all=true" -H "Authorization: Bearer $T"',
    "curl -s -X PUT https://api.shop.io/v2/customers -H 'Content-Type: application/json' -d '{\"tier\":\"free\"}'",
    'http PATCH "$API/v1/subscriptions" status=paused',
    'curl -X POST https://api.acme.io/admin/users/bulk-delete -H "Authorization: Bearer $T" -d \'{"filter":{}}\'',
    "curl -X DELETE 'http://localhost:8983/solr/admin/cores?action=UNLOAD&core=products&deleteIndex=true'",
    "npx --yes cdk@2 destroy --force",
    'docker run --rm -v "$PWD":/w -w /w hashicorp/terraform:1.7 destroy -auto-approve',
    "tofu plan -destroy -out destroy.tfplan && tofu apply destroy.tfplan",
    "git config alias.yolo 'push --force origin master' && git yolo",
    "fab -H web1,web2 -- 'sudo rm -rf /srv/app/releases'",
    "pyinfra web01 exec -- sudo rm -rf /var/www",
    "gsutil ls gs://old-exports/ | xargs -n1 gsutil rm",
    "docker volume ls -q | xargs -r docker volume rm",
    "heroku ps:stop worker -a shop-prod",
    "doctl compute droplet-action power-off 1234567",
    "cockroach sql --execute='ALTER TABLE users DROP COLUMN email'",
    'mysql shop < <(echo "DELETE FROM orders")',
    "psql -h db.internal -U admin -c \"ALTER ROLE app WITH PASSWORD 'hunter2'\"",
    "http DELETE example.org/api/users/1",
    "psql -c 'CREATE TEMP TABLE t AS SELECT 1; DROP TABLE orders'",
    "psql -c 'ALTER ROLE app SUPERUSER'",
    `mysql -e "GRANT ALL PRIVILEGES ON *.* TO 'app'@'%' WITH GRANT OPTION"`,
    `psql -c "ALTER USER postgres WITH PASSWORD 'postgres'"`,
  ],
  pass: [
    "git remote add origin git@github.com:me/new.git && git push -u origin --all",
    "git push origin --all",
    "terraform destroy -help",
    "helm uninstall -h",
    "aws s3 rm s3://prod-backups --recursive --dryrun",
    "pulumi destroy --preview-only --stack prod",
    "git push -n -f origin main",
    'curl -X DELETE https://api.example.com/v1/users/123 -H "Authorization: Bearer $T"',
    "http DELETE :5000/users/5",
    "psql -c \"SELECT id FROM notes WHERE body LIKE '%DROP TABLE%'\"",
    "psql -c \"SELECT 'DROP TABLE ' || tablename FROM pg_tables\"",
    'psql -c "SELECT 1 -- DROP TABLE users"',
    "psql -c 'EXPLAIN DELETE FROM events'",
    'psql -c "UPDATE accounts SET balance = 0 WHERE id = 1"',
    'mongosh app --eval \'db.users.updateMany({plan: "trial"}, {$set: {plan: "free"}})\'',
    "psql -c 'CREATE TEMP TABLE t AS SELECT 1; DROP TABLE t;'",
    `psql -c "GRANT SELECT ON orders TO reporting"`,
    `psql -c "ALTER USER app WITH PASSWORD 'x9!Lq2#vT'"`,
    "gh repo view acme/api",
    "az keyvault secret list --vault-name kv-dev",
    "docker service scale web=3",
    "curl -X DELETE http://localhost:8000/api/items/3",
    'curl -s -X PATCH https://api.shop.io/v2/customers/4711 -d \'{"tier":"free"}\'',
    'curl -X PUT http://localhost:8000/api/items -d \'{"name":"x"}\'',
    'curl -X PATCH https://api.github.com/repos/acme/infra -d \'{"description": "x"}\'',
    "tofu plan -destroy -out destroy.tfplan",
    "git config alias.pf 'push --force' && git pf origin feature/x",
    "fab -H web1 -- 'ls /srv/app/releases'",
    "redis-cli SET flushall 1",
    'sqlite3 ./t.db "CREATE TABLE scratch(x); DROP TABLE scratch;"',
    "heroku ps:scale web=2",
    "GIT_DIR=/tmp/scratch/.git git reset --hard",
    "npx prisma generate",
    "aws s3 ls",
  ],
};
