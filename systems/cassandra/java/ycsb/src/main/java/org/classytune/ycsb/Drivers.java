/*
 * Drivers: the Cassandra Java driver set-up shared by CassandraCqlClient and CqlExec.
 *
 * Both take plain host names and a port, as YCSB's binding and cqlsh do, and have no local
 * datacenter to give the driver (which requires one by default): DcInferringLoadBalancingPolicy
 * takes it from the contact points (they must all be in one datacenter), unless one is set
 * explicitly on the session builder.
 */
package org.classytune.ycsb;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.CqlSessionBuilder;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;
import com.datastax.oss.driver.api.core.config.ProgrammaticDriverConfigLoaderBuilder;
import java.net.InetSocketAddress;
import java.time.Duration;

final class Drivers {

  private Drivers() {
  }

  /** The driver's defaults (its reference.conf) with our load balancing and request timeout. */
  static ProgrammaticDriverConfigLoaderBuilder config(Duration requestTimeout) {
    return DriverConfigLoader.programmaticBuilder()
        .withString(DefaultDriverOption.LOAD_BALANCING_POLICY_CLASS,
            "DcInferringLoadBalancingPolicy")
        .withDuration(DefaultDriverOption.REQUEST_TIMEOUT, requestTimeout)
        // Closing waits for this many seconds without new tasks (default 2) before stopping
        // the driver's threads. Sessions close only when all their work is done, and YCSB
        // times cleanup() into [OVERALL] RunTime, so the wait would only deflate throughput.
        .withInt(DefaultDriverOption.NETTY_IO_SHUTDOWN_QUIET_PERIOD, 0)
        .withInt(DefaultDriverOption.NETTY_ADMIN_SHUTDOWN_QUIET_PERIOD, 0);
  }

  /** A session builder on the comma-separated {@code hosts}, all at {@code port}. */
  static CqlSessionBuilder builder(String hosts, int port, DriverConfigLoader config) {
    CqlSessionBuilder builder = CqlSession.builder().withConfigLoader(config);
    for (String host : hosts.split(",")) {
      if (!host.isBlank()) {
        builder.addContactPoint(new InetSocketAddress(host.trim(), port));
      }
    }
    return builder;
  }
}
