// The resource types that exist on every target, each used by a compute kernel. Depth is only
// compared, so WGSL gets it as a depth texture (Slang would declare texture_2d<f32>).
struct Elem
{
    float4 Value;
    uint4 Key;
    float4 Extra;
};

cbuffer Block { float4 BlockValue; uint4 BlockCount; };
struct CbData { float4 A; float4 B; };
ConstantBuffer<CbData> TypedBlock;
StructuredBuffer<Elem> Structured;
RWStructuredBuffer<Elem> RWStructured;
ByteAddressBuffer Raw;
RWByteAddressBuffer RWRaw;
Texture1D<float4> Tex1D;
Texture2D<float4> Tex2D;
Texture2DArray<float4> Tex2DArray;
Texture2DMS<float4> Tex2DMS;
Texture3D<float4> Tex3D;
TextureCube<float4> TexCube;
TextureCubeArray<float4> TexCubeArray;
[[vk::image_format("rgba8")]] RWTexture1D<float4> RWTex1D;
[[vk::image_format("r32f")]] RWTexture2D<float> RWTex2D;
[[vk::image_format("rgba8")]] RWTexture2DArray<float4> RWTex2DArray;
[[vk::image_format("r32ui")]] RWTexture3D<uint> RWTex3D;
SamplerState Linear;
SamplerComparisonState Shadow;
Texture2D<float> Depth;

[shader("compute")]
[numthreads(1, 1, 1)]
void UseAll(uint3 id : SV_DispatchThreadID)
{
    float4 acc = BlockValue + TypedBlock.A + TypedBlock.B;
    acc += Structured[id.x].Value + Structured[id.x].Extra;
    acc += asfloat(Raw.Load4(id.x * 16));
    acc += Tex1D.Load(int2(id.x, 0));
    acc += Tex2D.SampleLevel(Linear, float2(0.5, 0.5), 0.0);
    acc += Tex2DArray.SampleLevel(Linear, float3(0.5, 0.5, 0.0), 0.0);
    acc += Tex2DMS.Load(int2(id.xy), 0);
    acc += Tex3D.SampleLevel(Linear, float3(0.5, 0.5, 0.5), 0.0);
    acc += TexCube.SampleLevel(Linear, float3(0.0, 0.0, 1.0), 0.0);
    acc += TexCubeArray.SampleLevel(Linear, float4(0.0, 0.0, 1.0, 0.0), 0.0);
    acc.x += Depth.SampleCmpLevelZero(Shadow, float2(0.5, 0.5), 0.5);
    acc.x += float(BlockCount.x);
    Elem e;
    e.Value = acc;
    e.Key = uint4(id, 0);
    e.Extra = acc;
    RWStructured[id.x] = e;
    RWRaw.Store(id.x * 4, asuint(acc.y));
    RWTex1D[id.x] = acc;
    RWTex2D[id.xy] = acc.z;
    RWTex2DArray[uint3(id.xy, 0)] = acc;
    RWTex3D[id] = uint(acc.w);
}
