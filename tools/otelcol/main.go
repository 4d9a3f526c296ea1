// Command otelcol is the smallest OpenTelemetry Collector the end-to-end suites need: the OTLP
// receiver, and the Prometheus and Prometheus remote-write exporters, all of one release. It is
// what the otelcol builder would generate for those three components, written by hand so the
// build needs only the Go module proxy. scripts/build-otelcol.mjs builds it into a cache.
package main

import (
	"log"

	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/prometheusexporter"
	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/prometheusremotewriteexporter"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/envprovider"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"
	"go.opentelemetry.io/collector/confmap/provider/yamlprovider"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/service/telemetry/otelconftelemetry"
)

const contrib = "github.com/open-telemetry/opentelemetry-collector-contrib"

// components is the builder's generated components.go, for these three components only.
func components() (otelcol.Factories, error) {
	var err error
	otlp := otlpreceiver.NewFactory()
	prometheus := prometheusexporter.NewFactory()
	remoteWrite := prometheusremotewriteexporter.NewFactory()
	f := otelcol.Factories{
		Telemetry:       otelconftelemetry.NewFactory(),
		ReceiverModules: map[component.Type]string{otlp.Type(): "go.opentelemetry.io/collector/receiver/otlpreceiver v0.165.0"},
		ExporterModules: map[component.Type]string{
			prometheus.Type():  contrib + "/exporter/prometheusexporter v0.165.1",
			remoteWrite.Type(): contrib + "/exporter/prometheusremotewriteexporter v0.165.1",
		},
	}
	if f.Receivers, err = otelcol.MakeFactoryMap[receiver.Factory](otlp); err != nil {
		return f, err
	}
	if f.Exporters, err = otelcol.MakeFactoryMap[exporter.Factory](prometheus, remoteWrite); err != nil {
		return f, err
	}
	if f.Processors, err = otelcol.MakeFactoryMap[processor.Factory](); err != nil {
		return f, err
	}
	if f.Extensions, err = otelcol.MakeFactoryMap[extension.Factory](); err != nil {
		return f, err
	}
	if f.Connectors, err = otelcol.MakeFactoryMap[connector.Factory](); err != nil {
		return f, err
	}
	return f, nil
}

func main() {
	set := otelcol.CollectorSettings{
		BuildInfo: component.BuildInfo{
			Command:     "otelcol-gym",
			Description: "OpenTelemetry Collector for gym-telemetry's end-to-end suites",
			Version:     "0.165.0",
		},
		Factories: components,
		ConfigProviderSettings: otelcol.ConfigProviderSettings{
			ResolverSettings: confmap.ResolverSettings{
				ProviderFactories: []confmap.ProviderFactory{
					envprovider.NewFactory(),
					fileprovider.NewFactory(),
					yamlprovider.NewFactory(),
				},
			},
		},
	}
	if err := otelcol.NewCommand(set).Execute(); err != nil {
		log.Fatalf("collector finished with error: %v", err)
	}
}
