# bench/lib.sh — what the benchmark scripts share (sourced, not run).
#
#   bench_bootstrap [a|b]   prints the bootstrap address of the local Kafka
#                           cluster a (default) or b, starting it when absent
#   kc_classpath OUTDIR     resolves Kafka Connect 4.1.1 (bench/kafkaconnect/pom.xml)
#                           from Maven Central once per pom change and prints
#                           the file that holds the classpath
#
# Both expect to run from the repository root.

# bench_bootstrap reuses a running broker as it is: `kafka.sh up` restarts a
# broker that is slow to answer its probe, which on a loaded machine would
# kill a broker other runs are using.
bench_bootstrap() {
  local cluster=${1:-a} env=kafka.env key=KAFKA_BOOTSTRAP
  if [[ $cluster == b ]]; then env=kafka-b.env key=KAFKA_BOOTSTRAP_B; fi
  local run_dir=${CONNECTD_RUN_DIR:-$PWD/.run} bs
  bs=$(sed -n "s/^$key=//p" "$run_dir/$env" 2>/dev/null || true)
  if [[ -z $bs ]] || ! (exec 3<>"/dev/tcp/${bs%:*}/${bs##*:}") 2>/dev/null; then
    if [[ $cluster == b ]]; then
      bs=$(scripts/kafka.sh up b | sed -n "s/^$key=//p")
    else
      bs=$(scripts/kafka.sh up | sed -n "s/^$key=//p")
    fi
  fi
  [[ -n $bs ]] || { echo "bench: Kafka cluster $cluster did not start (scripts/kafka.sh up $cluster)" >&2; return 1; }
  echo "$bs"
}

kc_classpath() {
  local out=$1 pom=bench/kafkaconnect/pom.xml
  local cp_file=$out/kafkaconnect.classpath sum
  mkdir -p "$out"
  sum=$(sha256sum "$pom" | cut -d' ' -f1)
  if [[ ! -s $cp_file || ! -f $cp_file.sum || $(cat "$cp_file.sum") != "$sum" ]]; then
    echo "bench: resolving Kafka Connect 4.1.1 from Maven Central (log: $out/kafkaconnect-maven.log)" >&2
    mvn -q -B -f "$pom" org.apache.maven.plugins:maven-dependency-plugin:3.8.1:build-classpath \
      -Dmdep.outputFile="$PWD/$cp_file" >"$out/kafkaconnect-maven.log" 2>&1 ||
      { echo "bench: Maven could not resolve Kafka Connect; see $out/kafkaconnect-maven.log" >&2; return 1; }
    echo "$sum" >"$cp_file.sum"
  fi
  echo "$cp_file"
}
