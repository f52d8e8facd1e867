import ArgumentParser
import FogKit

/// `--environment`: which of the container's two environments (each with its own data and
/// schema) a command works on.
struct EnvironmentOptions: ParsableArguments {
    @Option(name: .long, help: "The environment: development (the default) or production; each has its own data and schema.")
    var environment: Container.Environment = .development

    /// `configuration` in the chosen environment.
    func applied(to configuration: Container.Configuration = .init()) -> Container.Configuration {
        var configuration = configuration
        configuration.environment = environment
        return configuration
    }
}
