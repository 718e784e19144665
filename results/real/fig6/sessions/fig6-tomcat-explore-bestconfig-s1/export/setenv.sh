# best configuration exported by the ClassyTune harness: session fig6-tomcat-explore-bestconfig-s1, trial 69 of 100
# units: keepAliveTimeout [ms], jvm.heap_mb [MiB]
CATALINA_OPTS='-Djava.awt.headless=true -Xmx2013m -XX:+UseSerialGC -Xss1024k -XX:+TieredCompilation'
