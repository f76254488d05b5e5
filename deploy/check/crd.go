package check

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// The custom resources the components use, as small local types holding
// only the fields chemmy's manifests set: decoded strictly like the
// built-in kinds, a field not listed here is refused (so a typo, or a
// field of another version of the CRD, is caught). Their meaning is
// checked by CheckReferences and CheckCertificates.

// Certificate is cert-manager.io/v1 Certificate, the fields chemmy uses.
type Certificate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              CertificateSpec `json:"spec"`
}

// CertificateSpec is the spec of a Certificate.
type CertificateSpec struct {
	SecretName string `json:"secretName"`
	IsCA       bool   `json:"isCA,omitempty"`
	CommonName string `json:"commonName,omitempty"`
	Subject    *struct {
		Organizations []string `json:"organizations,omitempty"`
	} `json:"subject,omitempty"`
	// Duration and RenewBefore are Go durations ("720h").
	Duration    string `json:"duration,omitempty"`
	RenewBefore string `json:"renewBefore,omitempty"`
	PrivateKey  *struct {
		Algorithm      string `json:"algorithm,omitempty"`
		Size           int    `json:"size,omitempty"`
		RotationPolicy string `json:"rotationPolicy,omitempty"`
	} `json:"privateKey,omitempty"`
	Usages    []string  `json:"usages,omitempty"`
	URIs      []string  `json:"uris,omitempty"`
	DNSNames  []string  `json:"dnsNames,omitempty"`
	IssuerRef IssuerRef `json:"issuerRef"`
}

// IssuerRef names the Issuer (or ClusterIssuer) of a Certificate.
type IssuerRef struct {
	Name  string `json:"name"`
	Kind  string `json:"kind,omitempty"`
	Group string `json:"group,omitempty"`
}

// Issuer is cert-manager.io/v1 Issuer: self-signed or a CA.
type Issuer struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		SelfSigned *struct{} `json:"selfSigned,omitempty"`
		CA         *struct {
			SecretName string `json:"secretName"`
		} `json:"ca,omitempty"`
	} `json:"spec"`
}

// ServiceMonitor is monitoring.coreos.com/v1 ServiceMonitor (Prometheus
// Operator), the fields chemmy uses.
type ServiceMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Selector  metav1.LabelSelector `json:"selector"`
		Endpoints []struct {
			Port     string `json:"port"`
			Path     string `json:"path,omitempty"`
			Interval string `json:"interval,omitempty"`
			// Relabelings apply to the target's labels before the
			// scrape, after the operator's own (which set job and
			// service to the Service's name).
			Relabelings []RelabelConfig `json:"relabelings,omitempty"`
		} `json:"endpoints"`
	} `json:"spec"`
}

// RelabelConfig is a Prometheus relabeling, the fields chemmy uses.
type RelabelConfig struct {
	SourceLabels []string `json:"sourceLabels,omitempty"`
	Separator    string   `json:"separator,omitempty"`
	TargetLabel  string   `json:"targetLabel,omitempty"`
	Regex        string   `json:"regex,omitempty"`
	Replacement  *string  `json:"replacement,omitempty"`
	Action       string   `json:"action,omitempty"`
}

// PrometheusRule is monitoring.coreos.com/v1 PrometheusRule (Prometheus
// Operator), the fields chemmy uses.
type PrometheusRule struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Groups []struct {
			Name     string `json:"name"`
			Interval string `json:"interval,omitempty"`
			Rules    []struct {
				Alert       string            `json:"alert,omitempty"`
				Record      string            `json:"record,omitempty"`
				Expr        string            `json:"expr"`
				For         string            `json:"for,omitempty"`
				Labels      map[string]string `json:"labels,omitempty"`
				Annotations map[string]string `json:"annotations,omitempty"`
			} `json:"rules"`
		} `json:"groups"`
	} `json:"spec"`
}
