# Stand-in of Hadoop's etc/hadoop/hadoop-env.sh (tests only).
# The java implementation to use.
# export JAVA_HOME=/usr/lib/jvm/java-11-openjdk-amd64
