// A global struct of resources: one resource per field, named material.albedo and so on, on
// consecutive bindings where the struct is declared (DXC flattens it the same way); the loose
// uniform after it makes $Globals, which comes next. SPIR-V only.
struct Material
{
    Texture2D albedo;
    SamplerState albedoSampler;
};

float4 sampleMaterial(Material m, float2 uv)
{
    return m.albedo.Sample(m.albedoSampler, uv);
}

Material material;
float exposure;
Texture2D detail;

float4 main(float2 uv : TEXCOORD0) : SV_Target
{
    return sampleMaterial(material, uv) * exposure + detail.Sample(material.albedoSampler, uv);
}
