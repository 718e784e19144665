/*
 * CassandraCqlClient: a YCSB database binding (site.ycsb.DB) for Apache Cassandra over CQL.
 *
 * YCSB's own cassandra-cql binding is not published on Maven Central, so this reimplements it on
 * the Apache Cassandra Java driver 4.x with the same properties and table layout:
 *
 *   hosts                            comma-separated contact points (required)
 *   port                             native-protocol port, default 9042
 *   cassandra.keyspace               default ycsb
 *   cassandra.readconsistencylevel   default ONE
 *   cassandra.writeconsistencylevel  default ONE
 *   cassandra.username / .password   optional, plain-text authentication
 *   cassandra.connecttimeoutmillis   driver connect timeout, default the driver's (5 s)
 *   cassandra.readtimeoutmillis      driver request timeout, default 12000
 *   cassandra.localdc                local datacenter; default: inferred from the contact points
 *
 * The table (YCSB's "table" property, usertable by default) is
 * (y_id varchar PRIMARY KEY, field0 varchar, ..., fieldN varchar).
 */
package org.classytune.ycsb;

import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.CqlSessionBuilder;
import com.datastax.oss.driver.api.core.DefaultConsistencyLevel;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.ProgrammaticDriverConfigLoaderBuilder;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.ColumnDefinition;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.Vector;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import site.ycsb.ByteArrayByteIterator;
import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.DBException;
import site.ycsb.Status;

public class CassandraCqlClient extends DB {

  private static final String KEY = "y_id";

  /*
   * YCSB creates one DB instance per client thread; like YCSB's binding they all share one
   * session (the driver pools connections and is thread-safe), opened by the first init() and
   * closed by the last cleanup(). These fields are written under the class lock; the operations
   * read them without it, which is safe because each thread's own init() took that lock first.
   */
  private static CqlSession session;
  private static int references;
  private static ConsistencyLevel readConsistency;
  private static ConsistencyLevel writeConsistency;

  /** Prepared statements by operation, table and (sorted) field list: preparing is a round trip. */
  private static final Map<String, PreparedStatement> STATEMENTS = new ConcurrentHashMap<>();

  /** YCSB counts failed operations itself; one printed cause is enough to explain them. */
  private static final AtomicBoolean ERROR_PRINTED = new AtomicBoolean();

  @Override
  public void init() throws DBException {
    synchronized (CassandraCqlClient.class) {
      if (session == null) {
        Properties p = getProperties();
        readConsistency = consistency(p, "cassandra.readconsistencylevel");
        writeConsistency = consistency(p, "cassandra.writeconsistencylevel");
        try {
          session = open(p);
        } catch (RuntimeException e) {
          throw new DBException("cannot open a Cassandra session (hosts="
              + p.getProperty("hosts") + "): " + e, e);
        }
      }
      references++;
    }
  }

  @Override
  public void cleanup() throws DBException {
    synchronized (CassandraCqlClient.class) {
      if (--references == 0) {
        STATEMENTS.clear();
        session.close();
        session = null;
      }
    }
  }

  private static ConsistencyLevel consistency(Properties p, String name) throws DBException {
    String level = p.getProperty(name, "ONE").trim().toUpperCase();
    try {
      return DefaultConsistencyLevel.valueOf(level);
    } catch (IllegalArgumentException e) {
      throw new DBException(name + "=" + level + " is not a consistency level", e);
    }
  }

  private static CqlSession open(Properties p) {
    String hosts = p.getProperty("hosts");
    if (hosts == null || hosts.isBlank()) {
      throw new IllegalArgumentException("required property hosts is missing");
    }
    int port = Integer.parseInt(p.getProperty("port", "9042").trim());
    ProgrammaticDriverConfigLoaderBuilder config = Drivers.config(Duration.ofMillis(
        Long.parseLong(p.getProperty("cassandra.readtimeoutmillis", "12000").trim())));
    String connectTimeout = p.getProperty("cassandra.connecttimeoutmillis");
    if (connectTimeout != null) {
      config.withDuration(DefaultDriverOption.CONNECTION_CONNECT_TIMEOUT,
          Duration.ofMillis(Long.parseLong(connectTimeout.trim())));
    }
    CqlSessionBuilder builder = Drivers.builder(hosts, port, config.build())
        .withKeyspace(p.getProperty("cassandra.keyspace", "ycsb"));
    String localDc = p.getProperty("cassandra.localdc");
    if (localDc != null && !localDc.isBlank()) {
      builder.withLocalDatacenter(localDc.trim());
    }
    String username = p.getProperty("cassandra.username");
    if (username != null && !username.isEmpty()) {
      builder.withAuthCredentials(username, p.getProperty("cassandra.password", ""));
    }
    return builder.build();
  }

  private static PreparedStatement prepared(String op, String table, List<String> fields,
      String cql) {
    return STATEMENTS.computeIfAbsent(op + ' ' + table + ' ' + fields,
        k -> session.prepare(cql));
  }

  /** "*" for all columns, else the requested ones in a stable order (the cache key). */
  private static List<String> columns(Set<String> fields) {
    return fields == null ? List.of("*") : new ArrayList<>(new TreeSet<>(fields));
  }

  private static Status error(String op, String key, RuntimeException e) {
    if (ERROR_PRINTED.compareAndSet(false, true)) {
      System.err.println("CassandraCqlClient: " + op + " of key " + key + " failed: " + e
          + " (further errors are only counted)");
    }
    return Status.ERROR;
  }

  /** Every column of a row, as raw bytes (the driver's UTF-8 encoding of the varchar). */
  private static void copy(Row row, Map<String, ByteIterator> into) {
    int i = 0;
    for (ColumnDefinition column : row.getColumnDefinitions()) {
      ByteBuffer value = row.getBytesUnsafe(i++);
      if (value == null) {
        into.put(column.getName().asInternal(), null);
      } else {
        byte[] bytes = new byte[value.remaining()];
        value.duplicate().get(bytes);
        into.put(column.getName().asInternal(), new ByteArrayByteIterator(bytes));
      }
    }
  }

  @Override
  public Status read(String table, String key, Set<String> fields,
      Map<String, ByteIterator> result) {
    try {
      List<String> columns = columns(fields);
      PreparedStatement statement = prepared("read", table, columns, "SELECT "
          + String.join(", ", columns) + " FROM " + table + " WHERE " + KEY + " = ? LIMIT 1");
      Row row = session.execute(statement.bind(key).setConsistencyLevel(readConsistency)).one();
      if (row == null) {
        return Status.NOT_FOUND;
      }
      copy(row, result);
      return Status.OK;
    } catch (RuntimeException e) {
      return error("read", key, e);
    }
  }

  /** Token order, as YCSB's binding: a scan walks the ring from the start key's token. */
  @Override
  public Status scan(String table, String startkey, int recordcount, Set<String> fields,
      Vector<HashMap<String, ByteIterator>> result) {
    try {
      List<String> columns = columns(fields);
      PreparedStatement statement = prepared("scan", table, columns, "SELECT "
          + String.join(", ", columns) + " FROM " + table + " WHERE token(" + KEY
          + ") >= token(?) LIMIT ?");
      BoundStatement bound = statement.bind(startkey, recordcount)
          .setConsistencyLevel(readConsistency);
      for (Row row : session.execute(bound)) {
        HashMap<String, ByteIterator> record = new HashMap<>();
        copy(row, record);
        result.add(record);
      }
      return Status.OK;
    } catch (RuntimeException e) {
      return error("scan", startkey, e);
    }
  }

  @Override
  public Status update(String table, String key, Map<String, ByteIterator> values) {
    try {
      TreeMap<String, ByteIterator> sorted = new TreeMap<>(values);
      List<String> fields = new ArrayList<>(sorted.keySet());
      PreparedStatement statement = prepared("update", table, fields, "UPDATE " + table
          + " SET " + String.join(" = ?, ", fields) + " = ? WHERE " + KEY + " = ?");
      List<Object> bindings = new ArrayList<>(fields.size() + 1);
      sorted.values().forEach(value -> bindings.add(value.toString()));
      bindings.add(key);
      session.execute(statement.bind(bindings.toArray()).setConsistencyLevel(writeConsistency));
      return Status.OK;
    } catch (RuntimeException e) {
      return error("update", key, e);
    }
  }

  @Override
  public Status insert(String table, String key, Map<String, ByteIterator> values) {
    try {
      TreeMap<String, ByteIterator> sorted = new TreeMap<>(values);
      List<String> fields = new ArrayList<>(sorted.keySet());
      PreparedStatement statement = prepared("insert", table, fields, "INSERT INTO " + table
          + " (" + KEY + ", " + String.join(", ", fields) + ") VALUES (?"
          + ", ?".repeat(fields.size()) + ")");
      List<Object> bindings = new ArrayList<>(fields.size() + 1);
      bindings.add(key);
      sorted.values().forEach(value -> bindings.add(value.toString()));
      session.execute(statement.bind(bindings.toArray()).setConsistencyLevel(writeConsistency));
      return Status.OK;
    } catch (RuntimeException e) {
      return error("insert", key, e);
    }
  }

  @Override
  public Status delete(String table, String key) {
    try {
      PreparedStatement statement = prepared("delete", table, List.of(),
          "DELETE FROM " + table + " WHERE " + KEY + " = ?");
      session.execute(statement.bind(key).setConsistencyLevel(writeConsistency));
      return Status.OK;
    } catch (RuntimeException e) {
      return error("delete", key, e);
    }
  }
}
