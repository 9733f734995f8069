/**
 * Remote and shared state: rows for migration tools, hosted databases and platforms, clusters, containers,
 * object stores, message brokers and git hosting (rows in the format of ../rules.ts, each with its own
 * must-flag and must-pass examples), and the data the generic remote judges (../remote.ts) read: CLIs judged
 * by the words of their verbs, launchers that run a tool (`npx prisma`, `bundle exec rails`), and HTTP paths
 * that name a whole store. Data, not code.
 */
import type { Rule } from "./types.js";

/** Rows in the rule table's format (concatenated into RULES). */
export const REMOTE_RULES: Rule[] = [
  // grants of admin rights and exposure of shared services to everyone
  {
    program: ["aws"],
    verbs: [["iam"]],
    args: /(attach|put)-(user|role|group)-policy\s.*(AdministratorAccess|IAMFullAccess|PowerUserAccess|"Action"\s*:\s*"\*")|(^|\s)(create-access-key|create-login-profile|update-assume-role-policy)(\s|$)/,
    effect: "remote",
    key: "privilege_grant",
    flag: [
      "aws iam attach-user-policy --user-name ci --policy-arn arn:aws:iam::aws:policy/AdministratorAccess",
      "aws iam create-access-key --user-name admin",
    ],
    pass: [
      "aws iam list-users",
      "aws iam attach-role-policy --role-name r --policy-arn arn:aws:iam::aws:policy/ReadOnlyAccess",
    ],
  },
  {
    program: ["gcloud"],
    args: /add-iam-policy-binding\s.*(roles\/(owner|editor|[\w.]*[aA]dmin)\b|allUsers|allAuthenticatedUsers)/,
    effect: "remote",
    key: "privilege_grant",
    flag: [
      "gcloud projects add-iam-policy-binding p --member=user:x@gmail.com --role=roles/owner",
      "gcloud functions add-iam-policy-binding fn --member=allUsers --role=roles/cloudfunctions.invoker",
    ],
    pass: ["gcloud projects add-iam-policy-binding p --member=serviceAccount:ci@p.iam --role=roles/viewer"],
  },
  {
    program: ["gsutil"],
    args: /(^|\s)(iam|acl|defacl)\s+(ch|set)\s.*(allUsers|allAuthenticatedUsers|public-read)/,
    effect: "remote",
    key: "privilege_grant",
    flag: ["gsutil iam ch allUsers:objectViewer gs://ml-datasets"],
    pass: ["gsutil iam get gs://ml-datasets"],
  },
  {
    program: ["aws"],
    args: /put-(bucket|object)-acl\s.*public-read|put-bucket-policy\s.*"Principal"\s*:\s*("\*"|\{\s*"AWS"\s*:\s*"\*")|delete-public-access-block/,
    effect: "remote",
    key: "privilege_grant",
    flag: ["aws s3api put-bucket-acl --bucket reports --acl public-read"],
    pass: ["aws s3api put-bucket-acl --bucket reports --acl private"],
  },
  {
    program: ["az"],
    args: /(^|\s)role\s+assignment\s+create\s.*--role[= ]("|')?(Owner|Contributor|User Access Administrator)\b|--public-access\s+(blob|container)|--allow-blob-public-access\s+true/,
    effect: "remote",
    key: "privilege_grant",
    flag: [
      "az role assignment create --assignee dev@contoso.com --role Owner --scope /subscriptions/x",
      "az storage container set-permission --account-name a --name e --public-access blob",
    ],
    pass: [
      "az role assignment list --assignee dev@contoso.com",
      "az role assignment create --assignee x --role Reader",
    ],
  },
  {
    program: ["aws", "gcloud", "az"],
    args: /(authorize-security-group-ingress|firewall-rules\s+(create|update)|nsg\s+rule\s+(create|update))\s.*(0\.0\.0\.0\/0|::\/0|--source-address-prefix(es)?[= ]("|')?(\*|Internet|Any)\b)/,
    effect: "remote",
    key: "firewall_change",
    flag: [
      "aws ec2 authorize-security-group-ingress --group-id sg-1 --protocol tcp --port 22 --cidr 0.0.0.0/0",
      "gcloud compute firewall-rules create allow-all --allow all --source-ranges 0.0.0.0/0",
    ],
    pass: ["aws ec2 authorize-security-group-ingress --group-id sg-1 --protocol tcp --port 443 --cidr 10.0.0.0/8"],
  },
  {
    program: ["kubectl", "oc"],
    verbs: [["create"], ["clusterrolebinding", "rolebinding"]],
    args: /--clusterrole[= ](cluster-admin|admin)\b/,
    effect: "remote",
    key: "privilege_grant",
    flag: ["kubectl create clusterrolebinding x --clusterrole=cluster-admin --serviceaccount=default:default"],
    pass: ["kubectl create rolebinding x --clusterrole=view --user=dev -n dev"],
  },
  {
    program: ["vault"],
    verbs: [["token"], ["create"]],
    args: /-policy[= ]root\b/,
    effect: "remote",
    key: "privilege_grant",
    flag: ["vault token create -policy=root -ttl=0"],
    pass: ["vault token create -policy=reader -ttl=1h"],
  },
  {
    program: ["redis-cli", "valkey-cli", "keydb-cli"],
    args: /(^|\s)config\s+set\s+(requirepass\s*(""|''|$)|protected-mode\s+no)/i,
    effect: "remote",
    key: "privilege_grant",
    flag: ['redis-cli CONFIG SET requirepass ""', "redis-cli config set protected-mode no"],
    pass: ["redis-cli CONFIG GET maxmemory"],
  },
  {
    program: ["localtunnel", "lt", "serveo", "pinggy", "tunnelmole", "zrok"],
    unless: /^(--version|--help|-h)$/,
    effect: "execute",
    key: "remote_access",
    flag: ["localtunnel --port 3000"],
    pass: ["lt --help"],
  },
  {
    program: ["php"],
    args: /(^|\s)-S\s+(0\.0\.0\.0|\[::\]):\d+\s.*-t\s+\/(\s|$)/,
    effect: "execute",
    key: "remote_access",
    flag: ["php -S 0.0.0.0:8000 -t /"],
    pass: ["php -S 127.0.0.1:8000 -t public"],
  },
  {
    program: ["docker", "podman", "nerdctl"],
    verbs: [["run", "create"]],
    // a service without a password published on every interface
    args: /^(?=.*(^|\s)(-p|--publish)[= ](0\.0\.0\.0:)?\d+:\d+)(?=.*(HOST_AUTH_METHOD=trust|ALLOW_EMPTY_PASSWORD=(yes|true|1)|--protected-mode\s+no))/,
    effect: "execute",
    key: "remote_access",
    flag: ["docker run -d -p 5432:5432 -e POSTGRES_HOST_AUTH_METHOD=trust postgres:16"],
    pass: [
      "docker run -d -p 127.0.0.1:5432:5432 -e POSTGRES_HOST_AUTH_METHOD=trust postgres:16",
      "docker run -d -p 5432:5432 -e POSTGRES_PASSWORD=dev postgres:16",
    ],
  },
  {
    program: ["docker", "podman", "nerdctl"],
    verbs: [["run", "create"]],
    // a container with the host's powers: privileged, in the host's pid space, or with / or /etc bound in
    args: /(^|\s)(--privileged(=true)?|--pid[= ]host)(\s|$)|(^|\s)(-v|--volume)[= ]\/(etc|root|boot|dev|proc|sys)?\/?:|(^|\s)--mount[= ]\S*\b(source|src)=\/(etc|root|boot)?\/?(,|\s|$)/,
    effect: "execute",
    key: "mount_change",
    flag: [
      "docker run --privileged -it ubuntu bash",
      "docker run --rm -v /:/host alpine rm -rf /host/etc",
      "podman run --rm -v /etc:/mnt alpine sh",
      "docker run --rm --pid=host alpine nsenter -t 1 -m sh",
    ],
    pass: [
      'docker run --rm -v "$PWD":/w -w /w node:20 npm test',
      "docker run --rm -v /etc/localtime:/etc/localtime:ro alpine date",
      "docker run --rm -v ./data:/data alpine ls /data",
    ],
  },
  {
    program: ["redis-cli", "valkey-cli", "keydb-cli"],
    // the server's dump file moved where a write plants keys or cron jobs
    args: /(^|\s)config\s+set\s+(dir|dbfilename)\s/i,
    effect: "remote",
    key: "privilege_grant",
    flag: ["redis-cli -h cache.prod CONFIG SET dir /root/.ssh"],
    pass: ["redis-cli CONFIG GET dir"],
  },
  {
    program: ["kubectl", "oc"],
    // every pod of a namespace, with the namespace option before the verb
    args: /(^|\s)delete\s+\S+\s(.*\s)?--all(\s|$)/,
    effect: "remote",
    key: "kubectl_mass_delete",
    flag: ["kubectl -n prod delete pods --all --grace-period=0 --force"],
    pass: ["kubectl -n dev delete pod api-7d9f"],
  },
  {
    program: ["kubectl", "oc"],
    // a shell in the node's root file system, or a service published on a public load balancer
    args: /(^|\s)(debug\s+(node\/\S+|nodes?\s)(.*\s)?(chroot|--profile[= ]sysadmin)|node-shell\s)|(^|\s)(patch|expose)\s.*LoadBalancer/,
    effect: "remote",
    key: "remote_access",
    flag: [
      "kubectl debug node/node-3 -it --image=busybox -- chroot /host rm -rf /etc/kubernetes",
      "kubectl node-shell node-3 -- rm -rf /var/lib/kubelet",
      'kubectl patch svc grafana -n monitoring -p \'{"spec":{"type":"LoadBalancer"}}\'',
      "kubectl expose deployment admin-panel --type=LoadBalancer --port=80",
    ],
    pass: ["kubectl debug -it api-7d9f --image=busybox", "kubectl expose deployment api --port=80"],
  },
  {
    program: ["az"],
    // a Complete-mode deployment deletes every resource of the group that the template does not name
    verbs: [["deployment"], ["group", "sub", "mg", "tenant"], ["create"]],
    args: /--mode[= ]complete/i,
    effect: "remote",
    key: "infra_teardown",
    flag: ["az deployment group create --mode Complete --template-file empty.json -g prod-rg"],
    pass: ["az deployment group what-if --mode Complete --template-file main.bicep -g dev-rg"],
  },
  {
    program: ["aws"],
    verbs: [["ecs"], ["update-service"]],
    args: /--desired-count[= ]0(\s|$)/,
    effect: "remote",
    key: "cluster_teardown",
    flag: ["aws ecs update-service --cluster prod --service api --desired-count 0"],
    pass: ["aws ecs update-service --cluster dev --service api --desired-count 2"],
  },
  {
    program: ["docker", "podman", "nerdctl"],
    verbs: [["run", "create"]],
    // the docker socket relayed onto a TCP port, or a notebook/IDE published with no token
    args: /^(?=.*docker\.sock)(?=.*(tcp-listen|(^|\s)(-p|--publish)[= ](0\.0\.0\.0:)?\d+:(2375|2376)(\s|$)))|^(?=.*(^|\s)(-p|--publish)[= ](0\.0\.0\.0:)?\d+:\d+)(?=.*(^|\s)(-e|--env)[= ](JUPYTER_TOKEN|PASSWORD)=(\s|$)|.*(^|\s)(-e|--env)[= ]AUTH=none(\s|$))/i,
    effect: "execute",
    key: "remote_access",
    flag: [
      "docker run -d -p 2375:2375 -v /var/run/docker.sock:/var/run/docker.sock alpine/socat tcp-listen:2375,fork unix-connect:/var/run/docker.sock",
      "docker run -d -p 8888:8888 -e JUPYTER_TOKEN= jupyter/base-notebook",
    ],
    pass: [
      "docker run --rm -v /var/run/docker.sock:/var/run/docker.sock docker:cli docker ps",
      "docker run -d -p 127.0.0.1:8888:8888 -e JUPYTER_TOKEN= jupyter/base-notebook",
      "docker run -d -p 8888:8888 -e JUPYTER_TOKEN=s3cr3t jupyter/base-notebook",
    ],
  },
  // migration tools and frameworks that drop or empty every table
  {
    program: ["flyway"],
    verbs: [["clean"]],
    effect: "remote",
    key: "sql_drop",
    flag: ["flyway clean"],
    pass: ["flyway migrate"],
  },
  {
    program: ["liquibase"],
    args: /(^|\s)(dropAll|drop-all)(\s|$)/i,
    effect: "remote",
    key: "sql_drop",
    flag: ["liquibase dropAll"],
    pass: ["liquibase update"],
  },
  {
    program: ["alembic", "flask"],
    args: /(^|\s)downgrade\s+base(\s|$)/,
    effect: "remote",
    key: "sql_drop",
    flag: ["alembic downgrade base", "flask db downgrade base"],
    pass: ["alembic downgrade -1", "alembic upgrade head"],
  },
  {
    program: ["dbmate", "migrate", "goose", "diesel", "sqlx", "atlas", "typeorm", "mikro-orm"],
    args: /(^|\s)(drop|reset|down-to\s+0|database\s+(reset|drop)|schema\s+clean|schema:drop|schema:fresh|migration:fresh)(\s|$)|(^|\s)down\s+-all\b/,
    effect: "remote",
    key: "sql_drop",
    flag: ['dbmate --url "$DATABASE_URL" drop', "sqlx database reset -y", "goose postgres $DSN reset"],
    pass: ["dbmate up", "sqlx migrate run", "goose up"],
  },
  {
    program: ["prisma"],
    args: /(^|\s)migrate\s+reset(\s|$)|--force-reset\b/,
    effect: "remote",
    key: "sql_drop",
    flag: ["prisma migrate reset --force", "npx prisma db push --force-reset"],
    pass: ["npx prisma migrate deploy", "npx prisma generate"],
  },
  {
    program: ["sequelize", "sequelize-cli", "knex"],
    args: /db:migrate:undo:all|migrate:rollback\s+.*--all|db:drop/,
    effect: "remote",
    key: "sql_drop",
    flag: ["npx sequelize-cli db:migrate:undo:all", "knex migrate:rollback --all"],
    pass: ["npx sequelize-cli db:migrate"],
  },
  {
    program: ["python", "python3", "django-admin", "manage.py"],
    args: /(^|\s)(\S*manage\.py\s+)?(flush|reset_db)(\s|$)|(^|\s)(\S*manage\.py\s+)?migrate\s+\S+\s+zero(\s|$)/,
    unless: /^-c\s/,
    effect: "remote",
    key: "sql_drop",
    flag: ["python manage.py flush --no-input", "python3 manage.py migrate shop zero", "./manage.py reset_db"],
    pass: ["python manage.py migrate", "python manage.py sqlflush"],
  },
  {
    program: ["rails", "rake"],
    args: /(^|\s)db:(drop|reset|purge|schema:load|structure:load|truncate_all|seed:replant|migrate:reset)(\s|$|:)|(^|\s)db:migrate\s+VERSION=0(\s|$)/,
    effect: "remote",
    key: "sql_drop",
    flag: ["bin/rails db:drop", "RAILS_ENV=production bundle exec rake db:reset"],
    pass: ["bin/rails db:migrate", "rails db:seed"],
  },
  {
    program: ["php", "artisan"],
    args: /(^|\s)(\S*artisan\s+)?(migrate:(fresh|reset|refresh)|db:wipe)(\s|$)/,
    effect: "remote",
    key: "sql_drop",
    flag: ["php artisan migrate:fresh --force", "php artisan db:wipe"],
    pass: ["php artisan migrate", "php artisan test"],
  },
  {
    program: ["mix"],
    args: /(^|\s)(ecto\.drop|ecto\.reset)(\s|$)|ecto\.rollback\s.*--all/,
    effect: "remote",
    key: "sql_drop",
    flag: ["mix ecto.reset", "MIX_ENV=prod mix ecto.drop"],
    pass: ["mix ecto.migrate"],
  },
  // hosted databases and platforms
  {
    program: ["heroku"],
    args: /(^|\s)pg:(reset|killall|backups:restore|restore)(\s|$)/,
    effect: "remote",
    key: "sql_drop",
    flag: ["heroku pg:reset DATABASE_URL --confirm acme"],
    pass: ["heroku pg:info"],
  },
  {
    program: ["supabase"],
    args: /(^|\s)db\s+reset\b.*(--linked|--db-url)/,
    effect: "remote",
    key: "sql_drop",
    flag: ["supabase db reset --linked"],
    pass: ["supabase db reset", "supabase start"],
  },
  {
    program: ["firebase"],
    args: /firestore:delete\b.*(\s-r\b|--recursive|--all-collections)|(^|\s)(database:remove|hosting:disable)(\s|$)/,
    effect: "remote",
    key: "sql_drop",
    flag: ["firebase firestore:delete --all-collections --project acme-prod", "firebase firestore:delete -r /users"],
    pass: ["firebase deploy --only hosting"],
  },
  {
    program: ["bq"],
    args: /(^|\s)rm(\s|$)/,
    effect: "remote",
    key: "sql_drop",
    flag: ["bq rm -r -f -d acme:analytics"],
    pass: ["bq ls", "bq show acme:analytics.events"],
  },
  {
    program: ["influx"],
    args: /(^|\s)(bucket|org|v1\s+dbrp)\s+delete(\s|$)|(^|\s)delete\s.*--start/,
    unless: /--predicate|(^|\s)-p\s/,
    effect: "remote",
    key: "sql_drop",
    flag: [
      "influx bucket delete -n metrics -o acme",
      "influx delete --bucket b --start 1970-01-01T00:00:00Z --stop 2100-01-01T00:00:00Z",
    ],
    pass: [
      "influx bucket list",
      "influx delete --bucket b --start 2024-01-01T00:00:00Z --predicate '_measurement=\"test\"'",
    ],
  },
  // brokers and caches
  {
    program: ["rabbitmqctl", "rabbitmqadmin"],
    args: /(^|\s)(purge_queue|delete_queue|delete_vhost|reset|force_reset|purge\s+queue|delete\s+queue)(\s|$)/,
    effect: "remote",
    key: "cache_flush",
    flag: ["rabbitmqctl purge_queue orders", "sudo rabbitmqctl reset"],
    pass: ["rabbitmqctl list_queues"],
  },
  {
    program: ["nats"],
    args: /(^|\s)(stream|str|kv|obj|consumer|con)\s+(rm|del|delete|purge)(\s|$)/,
    effect: "remote",
    key: "cache_flush",
    flag: ["nats stream rm ORDERS -f", "nats str del EVENTS --force"],
    pass: ["nats stream ls"],
  },
  {
    program: [
      "kafka-topics",
      "kafka-topics.sh",
      "kafka-consumer-groups",
      "kafka-consumer-groups.sh",
      "kafka-delete-records.sh",
      "kafka-delete-records",
    ],
    args: /(^|\s)--delete(\s|$)|--reset-offsets\b.*--execute|--offset-json-file/,
    effect: "remote",
    key: "cache_flush",
    flag: ["kafka-topics.sh --bootstrap-server kafka:9092 --delete --topic orders"],
    pass: ["kafka-topics.sh --bootstrap-server kafka:9092 --list"],
  },
  {
    program: ["fastly", "flarectl"],
    args: /(^|\s)purge\b.*--all|zone\s+purge\b.*--everything/,
    effect: "remote",
    key: "cache_flush",
    flag: ["fastly purge --all -s SU1Z0isx"],
    pass: ["fastly purge --key product-42 -s SU1Z0isx"],
  },
  {
    program: ["varnishadm"],
    args: /\bban\b.*(req\.url\s*~\s*\.|req\.url\s*~\s*\/\s*["']?$|obj\.http\.\S+\s*~\s*\.)/,
    effect: "remote",
    key: "cache_flush",
    flag: ['varnishadm "ban req.url ~ ."'],
    pass: ["varnishadm backend.list"],
  },
  {
    program: ["valkey-cli", "keydb-cli", "memcflush"],
    when: (operands, options) =>
      operands.some((o) => /^(flushall|flushdb)$/i.test(o)) || options.some((o) => o.startsWith("--servers")),
    effect: "remote",
    key: "cache_flush",
    flag: ["valkey-cli FLUSHALL", "memcflush --servers=cache1:11211"],
    pass: ["valkey-cli ping"],
  },
  // clusters and containers
  {
    program: ["kubectl", "oc"],
    args: /(^|\s)delete(\s|$)/,
    unless: /(^|\s)auth\s+can-i(\s|$)/,
    when: (ops) => {
      const at = ops.indexOf("delete");
      const kind = (ops[at + 1] ?? "").toLowerCase().split(/[/.]/)[0] ?? "";
      return WORKLOAD_KINDS.test(kind);
    },
    effect: "remote",
    key: "cluster_teardown",
    flag: ["kubectl delete deploy api -n prod", "kubectl -n data delete pvc --all", "oc delete project billing"],
    pass: ["kubectl delete pod api-7d9f -n dev", "kubectl auth can-i delete namespaces"],
  },
  {
    program: ["kubectl", "oc"],
    args: /(^|\s)delete\s.*(-f|--filename|-k|--kustomize)(\s|=|$)|(^|\s)patch\s.*["']?replicas["']?\s*:\s*0\b/,
    effect: "remote",
    key: "cluster_teardown",
    flag: ["kubectl delete -f k8s/", 'kubectl patch deploy web -p \'{"spec":{"replicas":0}}\''],
    pass: ["kubectl apply -f k8s/", "kubectl rollout status deploy/api"],
  },
  {
    program: ["kubectl", "oc"],
    args: /(^|\s)(rollout\s+(restart|undo)|set\s+(env|image|resources))(\s|$)/,
    when: (ops, options) => [...ops, ...options].some((w) => PRODUCTION.test(w.replace(/^--(namespace|context)=/, ""))),
    effect: "remote",
    key: "cluster_teardown",
    flag: [
      "kubectl -n production rollout restart statefulset/db",
      "kubectl set env deploy/web --namespace production X=off",
    ],
    pass: ["kubectl rollout restart deployment/api -n staging", "kubectl -n dev set image deployment/api api=api:v2"],
  },
  {
    program: ["kubectl", "oc"],
    verbs: [["port-forward", "proxy"]],
    args: /--address[= ]0\.0\.0\.0|--accept-hosts/,
    effect: "execute",
    key: "remote_access",
    flag: ["kubectl port-forward --address 0.0.0.0 svc/postgres 5432:5432"],
    pass: ["kubectl port-forward svc/postgres 5432:5432"],
  },
  {
    program: ["kubeadm"],
    verbs: [["reset"]],
    effect: "remote",
    key: "cluster_teardown",
    flag: ["kubeadm reset --force"],
    pass: ["kubeadm version"],
  },
  {
    program: ["nomad"],
    args: /(^|\s)(job\s+stop|stop|system\s+gc|node\s+drain)(\s|$)/,
    effect: "remote",
    key: "cluster_teardown",
    flag: ["nomad job stop -purge billing"],
    pass: ["nomad job status"],
  },
  {
    program: ["docker", "podman", "nerdctl", "docker-compose"],
    args: /(^|\s)(down)(\s.*)?\s(-v|--volumes|--rmi)(\s|$|=)|(^|\s)(system\s+reset|swarm\s+leave|volume\s+rm\s.*--all|volume\s+rm\s+-a)(\s|$)/,
    effect: "remote",
    key: "container_mass_delete",
    flag: [
      "docker compose down -v",
      "docker-compose down --volumes --rmi all",
      "podman system reset -f",
      "docker swarm leave --force",
    ],
    pass: ["docker compose down", "docker compose down --remove-orphans"],
  },
  {
    program: ["docker", "podman", "nerdctl"],
    args: /(^|\s)volume\s+(rm|remove)(\s|$)/,
    when: (ops) => ops.slice(2).some((v) => !/^(tmp|test|scratch|cache)/i.test(v)),
    effect: "remote",
    key: "volume_destroy",
    flag: ["docker volume rm pgdata", "podman volume rm postgres_data"],
    pass: ["docker volume rm scratch", "docker volume ls"],
  },
  {
    program: ["docker", "podman"],
    args: /(^|\s)service\s+(rm|remove)(\s|$)|(^|\s)(stack\s+(rm|down))(\s|$)|(^|\s)(stop|kill|rm)\s.*\$\(/,
    effect: "remote",
    key: "cluster_teardown",
    flag: ["docker service rm api", "docker stack rm prod", "docker stop $(docker ps -q)"],
    pass: ["docker service ls", "docker stop myapp-dev"],
  },
  {
    program: ["crictl", "ctr"],
    args: /(^|\s)(rmp|rmi|rm)\s.*(-a|--all|--prune|\$\()|(^|\s)(images|containers|c|i)\s+(rm|remove)\s.*\$\(/,
    effect: "remote",
    key: "container_mass_delete",
    flag: ["crictl rmp -af", "crictl rmi --all", "ctr -n k8s.io images rm $(ctr -n k8s.io images ls -q)"],
    pass: ["crictl ps"],
  },
  // object stores
  {
    program: ["aws"],
    args: /(^|\s)s3\s+sync\s+\S+\s+s3:\/\/.*--delete|(^|\s)s3\s+mv\s.*--recursive|(^|\s)s3\s+cp\s+\/dev\/null\s/,
    unless: /--dryrun/,
    effect: "remote",
    key: "cloud_storage_delete",
    flag: ["aws s3 sync ./empty s3://prod-site --delete", "aws s3 mv s3://a/ s3://b/ --recursive"],
    pass: [
      "aws s3 sync ./site s3://bucket --delete --dryrun",
      "aws s3 sync s3://b/reports ./reports --delete",
      "aws s3 sync s3://bucket/reports ./reports",
    ],
  },
  {
    program: ["gsutil", "gcloud", "rclone"],
    args: /(^|\s)(mv|move)\s.*(\*\*|\/\s|\/$|--recursive|-r\s)|(^|\s)cp\s+\/dev\/null\s+\w+:\/\/|(^|\s)(sync)\s+\S+\s+\S+:\S*(\s|$)|(^|\s)delete\s+\S+:/,
    effect: "remote",
    key: "cloud_storage_delete",
    flag: [
      "gsutil -m mv gs://shop-exports/** gs://shop-archive/",
      "rclone sync /workspace/empty s3remote:prod-bucket",
      "rclone delete s3remote:prod-logs",
    ],
    pass: ["gsutil cp gs://b/x.csv .", "rclone sync s3remote:data ./data"],
  },
  {
    program: ["az"],
    args: /(^|\s)storage\s+(blob|file|fs)\s+(delete-batch|delete\s.*--recursive)|(^|\s)storage\s+(container|share|account)\s+delete(\s|$)/,
    effect: "remote",
    key: "cloud_storage_delete",
    flag: ["az storage blob delete-batch -s uploads --account-name prodstore"],
    pass: ["az storage blob list --account-name prodstore -c uploads"],
  },
  {
    program: ["aws"],
    args: /(^|\s)(purge-queue|schedule-key-deletion|batch-delete-\S+|delete-objects|stop-instances|disable-key)(\s|$)/,
    effect: "remote",
    key: "infra_teardown",
    flag: [
      "aws sqs purge-queue --queue-url https://sqs.us-east-1.amazonaws.com/1/jobs",
      "aws kms schedule-key-deletion --key-id k",
    ],
    pass: ["aws sqs list-queues"],
  },
  {
    program: ["aws"],
    args: /(^|\s)cloudfront\s+create-invalidation\s.*--paths\s+['"]?\/\*/,
    effect: "remote",
    key: "cache_flush",
    flag: ["aws cloudfront create-invalidation --distribution-id E2AB --paths '/*'"],
    pass: ["aws cloudfront create-invalidation --distribution-id E2AB --paths /index.html"],
  },
  {
    program: ["pg_restore"],
    args: /(^|\s)(-c|--clean)(\s|$)/,
    unless: /(^|\s)(-h|--host)[= ]?(localhost|127\.0\.0\.1)(\s|$)/,
    effect: "remote",
    key: "sql_drop",
    flag: ["pg_restore --clean --if-exists -h prod-db.internal -d production backup.dump"],
    pass: ["pg_restore --clean -h localhost -d dev backup.dump", "pg_restore -l backup.dump"],
  },
  // git hosting
  {
    program: ["gh", "glab"],
    args: /(^|\s)api\s.*(-X|--method)[= ]?(DELETE|PATCH|PUT)\b.*\/git\/refs\/heads\/|(^|\s)api\s.*\/git\/refs\/heads\/.*(-X|--method)[= ]?(DELETE|PATCH|PUT)\b/,
    effect: "remote",
    key: "git_force_push",
    flag: [
      "gh api -X DELETE repos/acme/api/git/refs/heads/main",
      "gh api -X PATCH repos/a/b/git/refs/heads/main -f sha=abc -F force=true",
    ],
    pass: ["gh api repos/acme/api/git/refs/heads/main"],
  },
  {
    program: ["gh", "glab"],
    args: /(^|\s)api\s.*(-X|--method)[= ]?DELETE\b/,
    unless: /\/git\/refs\/heads\//,
    effect: "remote",
    key: "infra_teardown",
    flag: ["gh api -X DELETE repos/org/app/branches/main/protection"],
    pass: ["gh api repos/org/app/pulls"],
  },
  {
    program: ["git"],
    args: /(^|\s)push(\s|$)/,
    when: (ops, options) =>
      options.some((o) => /^-[a-zA-Z]*f[a-zA-Z]*$/.test(o) && !o.startsWith("--")) &&
      ops
        .slice(ops.indexOf("push") + 2)
        .some((r) =>
          /^\+?(refs\/heads\/)?(HEAD:)?(main|master|trunk|develop|prod|production|release([/-].*)?|stable)$/.test(r),
        ),
    effect: "remote",
    key: "git_force_push",
    flag: ["git push -uf origin release-1.4", "git -C ../shared push -f origin main"],
    pass: ["git push -u origin feature/x"],
  },
  {
    program: ["git"],
    args: /(^|\s)(remote\.\S+\.mirror[= ]true|remote\.\S+\.push[= ]'?\+)/,
    effect: "remote",
    key: "git_force_push",
    flag: [
      "git -c remote.origin.mirror=true push origin",
      "git -c remote.upstream.push=+refs/heads/*:refs/heads/* push upstream",
    ],
    pass: ["git -c user.name=x commit -m y"],
  },
];

/** A namespace, context or environment name that says production. */
export const PRODUCTION = /^(prod|production|live)([-_.].*)?$|[-_.](prod|production)$/;

/** kubectl kinds whose deletion takes down a service or its data (a single pod or job is rescheduled). */
export const WORKLOAD_KINDS =
  /^(ns|namespace|namespaces|pv|pvc|persistentvolume|persistentvolumes|persistentvolumeclaim|persistentvolumeclaims|node|nodes|crd|crds|deploy|deployment|deployments|deploys|sts|statefulset|statefulsets|ds|daemonset|daemonsets|svc|service|services|ingress|ingresses|ing|project|projects|storageclass|storageclasses|sc|secret|secrets|application|applications|hpa|rs|replicaset|replicasets|cronjob|cronjobs|cj|all|mutatingwebhookconfiguration|validatingwebhookconfiguration)$/;

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

/** Verbs (or parts of one) that destroy, empty, stop or cut off. */
export const DESTRUCTIVE_VERBS =
  /^(destroy|delete|remove|rm|del|purge|reset|drop|wipe|erase|terminate|stop|disable|revoke|deregister|unregister|truncate|flush|kill|uninstall|deactivate|suspend|shutdown|poweroff|halt|decommission|nuke|teardown|forget|prune|undefine|leave|labelclear|unregister)$/;

/** Words that make the command a read, a listing or a plan. */
export const READ_VERBS =
  /^(list|ls|show|get|describe|status|info|view|inspect|logs?|history|whoami|version|help|search|watch|tail|browse|open|diff|plan|validate|check|test|explain|print|export|download|cat|read|preview|what-if|config|completion|snapshots|stats|usage|ps|images|top|events)$/;

/** Programs whose global options come before the verb and take a value (`helm --kube-context X delete`). */
export const VALUED_GLOBALS =
  /^(-n|--namespace|--context|--kube-context|--kubeconfig|-H|--host|-c|--config|-C|-p|--project|--profile|--region|-r|-g|--resource-group|-s|--subscription|-o|--org|-a|--app|--cluster|--zone)$/;

/** Commands that run the tool named after them: the tool is judged as if run directly. */
export const LAUNCHERS: Record<string, { skip: RegExp; verbs?: string[] }> = {
  npx: { skip: /^(-y|--yes|-p|--package=.*|--no-install|-q|--quiet)$/ },
  bunx: { skip: /^(-y|--bun)$/ },
  pnpx: { skip: /^-y$/ },
  pnpm: { skip: /^$/, verbs: ["exec", "dlx"] },
  yarn: { skip: /^$/, verbs: ["dlx", "exec"] },
  bundle: { skip: /^$/, verbs: ["exec"] },
  poetry: { skip: /^$/, verbs: ["run"] },
  pipenv: { skip: /^$/, verbs: ["run"] },
  uv: { skip: /^$/, verbs: ["run"] },
  pdm: { skip: /^$/, verbs: ["run"] },
  hatch: { skip: /^$/, verbs: ["run"] },
  dotenv: { skip: /^(-e|-c)$/ },
};

/** The last path segment before an id that names a whole store rather than one of its records. */
export const STORE_SEGMENTS =
  /^(indexes|indices|index|collections|collection|buckets|bucket|databases|database|dbs|db|keyspaces|tables|zones|topics|queues|vhosts|exchanges|namespaces|projects|repos|repositories|schemas|clusters|volumes|snapshots|streams|datasets|spaces|tenants)$/i;

/** Examples of the generic remote judges (verbs of infrastructure CLIs, launchers, scale to zero, HTTP). */
/**
 * SQL that hands out every right or opens an account to anyone: `GRANT ALL … TO PUBLIC`/`'x'@'%'`/`WITH
 * GRANT OPTION`, SUPERUSER, an empty or default password. Read over the statement with its literals.
 */
export const SQL_GRANTS = [
  /\bgrant\s+all\b[^;]*\bto\s+(public\b|\S*@\s*'%')|\bwith\s+grant\s+option\b/i,
  /\b(alter|create)\s+(user|role)\b[^;]*\b(superuser|createrole)\b/i,
  /\b(alter|create)\s+(user|role)\b[^;]*\b(password|identified\s+by)\s+'(|password|postgres|root|admin|changeme|123456)'/i,
];

export const GENERIC_REMOTE_EXAMPLES = {
  flag: [
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
    "aws sqs purge-queue --queue-url https://sqs.us-east-1.amazonaws.com/1/jobs",
    "mysql -h db.prod -e 'DROP DATABASE shop'",
    "psql -tc \"SELECT 'DROP TABLE ' || tablename || ';' FROM pg_tables\" | psql",
    'curl -X DELETE https://api.example.com/v1/users -H "Authorization: Bearer $T"',
    'curl -X DELETE "https://api.example.com/v1/users?all=true" -H "Authorization: Bearer $T"',
    "http DELETE example.org/api/users/1",
    "psql -c 'CREATE TEMP TABLE t AS SELECT 1; DROP TABLE orders'",
    "psql -c 'ALTER ROLE app SUPERUSER'",
    `mysql -e "GRANT ALL PRIVILEGES ON *.* TO 'app'@'%' WITH GRANT OPTION"`,
    `psql -c "ALTER USER postgres WITH PASSWORD 'postgres'"`,
  ],
  pass: [
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
    "npx prisma generate",
    "aws s3 ls",
  ],
};
