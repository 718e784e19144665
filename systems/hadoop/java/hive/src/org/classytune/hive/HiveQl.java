package org.classytune.hive;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.hive.common.io.SessionStream;
import org.apache.hadoop.hive.conf.HiveConf;
import org.apache.hadoop.hive.ql.IDriver;
import org.apache.hadoop.hive.ql.processors.CommandProcessor;
import org.apache.hadoop.hive.ql.processors.CommandProcessorException;
import org.apache.hadoop.hive.ql.processors.CommandProcessorFactory;
import org.apache.hadoop.hive.ql.session.SessionState;

/**
 * Runs a file of HiveQL statements in one Hive session, as {@code hive -f <file>} does.
 *
 * <p>Central serves hive-exec 4.1.0 but not hive-cli or hive-service 4.1.0, so this is the
 * harness's stand-in for the CLI: statements end with a semicolon at the end of a line, {@code
 * set}/{@code reset}/{@code add} go to Hive's own command processors and everything else to a
 * Driver, exactly as the CLI dispatches them. Query rows go to stdout; after each statement one
 * line {@code HIVEQL <n> <seconds> <first words>} goes to stderr, so that a workload can time
 * its queries without the session's start-up (the metastore's schema check, class loading).
 * The first failed statement ends the run with exit code 2 and a {@code FAILED:} line.
 *
 * <p>Usage: {@code HiveQl -f <file> [--hiveconf key=value]...}
 */
public final class HiveQl {
  private HiveQl() {}

  public static void main(String[] args) throws Exception {
    String file = null;
    List<String[]> overrides = new ArrayList<>();
    for (int i = 0; i < args.length; i++) {
      if (args[i].equals("-f") && i + 1 < args.length) {
        file = args[++i];
      } else if (args[i].equals("--hiveconf") && i + 1 < args.length) {
        String[] pair = args[++i].split("=", 2);
        if (pair.length != 2) {
          usage("--hiveconf needs key=value, got " + args[i]);
        }
        overrides.add(pair);
      } else {
        usage("unknown argument " + args[i]);
      }
    }
    if (file == null) {
      usage("no -f <file>");
    }
    HiveConf conf = new HiveConf(SessionState.class);
    for (String[] pair : overrides) {
      conf.set(pair[0], pair[1]);
    }
    SessionState session = new SessionState(conf, System.getProperty("user.name"));
    session.out = new SessionStream(System.out, true, StandardCharsets.UTF_8.name());
    session.err = new SessionStream(System.err, true, StandardCharsets.UTF_8.name());
    SessionState.start(session);
    int status = 0;
    try {
      int n = 0;
      for (String statement : statements(file)) {
        n++;
        long began = System.nanoTime();
        try {
          run(statement, session.getConf());
        } catch (CommandProcessorException e) {
          System.err.println("FAILED: statement " + n + ": " + e.getMessage());
          status = 2;
          break;
        }
        double seconds = (System.nanoTime() - began) / 1e9;
        System.err.printf("HIVEQL %d %.3f %s%n", n, seconds, head(statement));
      }
    } finally {
      session.close();
    }
    System.exit(status);
  }

  /** One statement through the processor the CLI would pick for it. */
  private static void run(String statement, HiveConf conf) throws Exception {
    String[] tokens = statement.split("\\s+");
    CommandProcessor processor = CommandProcessorFactory.get(tokens, conf);
    if (processor instanceof IDriver) {
      IDriver driver = (IDriver) processor;
      try {
        driver.run(statement);
        List<Object> rows = new ArrayList<>();
        while (driver.getResults(rows)) {
          for (Object row : rows) {
            System.out.println(row);
          }
          rows.clear();
        }
      } finally {
        driver.close();
      }
    } else {
      // Hive's own commands take the statement without its first word, as in the CLI.
      try (CommandProcessor command = processor) {
        command.run(statement.substring(tokens[0].length()).trim());
      }
    }
  }

  /** The file's statements: text up to a semicolon that ends a line; "--" lines dropped. */
  static List<String> statements(String file) throws IOException {
    List<String> out = new ArrayList<>();
    StringBuilder current = new StringBuilder();
    for (String line : Files.readAllLines(Paths.get(file), StandardCharsets.UTF_8)) {
      String trimmed = line.trim();
      if (trimmed.startsWith("--") || trimmed.isEmpty()) {
        continue;
      }
      if (trimmed.endsWith(";")) {
        current.append(trimmed, 0, trimmed.length() - 1);
        if (current.toString().trim().length() > 0) {
          out.add(current.toString().trim());
        }
        current.setLength(0);
      } else {
        current.append(trimmed).append('\n');
      }
    }
    if (current.toString().trim().length() > 0) {
      out.add(current.toString().trim());
    }
    return out;
  }

  private static String head(String statement) {
    String flat = statement.replaceAll("\\s+", " ");
    return flat.length() > 60 ? flat.substring(0, 60) : flat;
  }

  private static void usage(String why) {
    System.err.println("HiveQl: " + why + "; usage: HiveQl -f <file> [--hiveconf key=value]...");
    System.exit(1);
  }
}
