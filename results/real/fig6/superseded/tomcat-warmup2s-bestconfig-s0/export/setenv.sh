# best configuration exported by the ClassyTune harness: session fig6-tomcat-explore-bestconfig-s0, trial 25 of 34
# units: keepAliveTimeout [ms], jvm.heap_mb [MiB]
CATALINA_OPTS='-Djava.awt.headless=true -Xmx34m -XX:+UseSerialGC -Xss1024k -XX:+TieredCompilation'
